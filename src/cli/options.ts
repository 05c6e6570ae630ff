/**
 * The command line's options, read with `node:util.parseArgs`. parseArgs runs
 * unstrict so that every mistake becomes our `invalid_argument` error naming
 * the option, the value received, what is allowed and how to fix it, instead
 * of parseArgs' own message.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { invalidArgument } from "../errors";
import { nearestKey } from "../resources/core/unknown-keys";

const OPERATION = "cli";

/**
 * Reads `args` as `--name VALUE` or `--name=VALUE` options, each one of
 * `names`; the last occurrence of a repeated option wins.
 *
 * @param fix - how to fix a mistake, e.g. "run `sandbox-iac --help`"
 * @throws SandboxIacError `invalid_argument` for an unknown option, an option
 *   without its value, or a positional argument
 */
export function parseOptions<Name extends string>(
  args: readonly string[],
  names: readonly Name[],
  fix: string,
): Partial<Record<Name, string>> {
  const known: readonly string[] = names;
  const allowed = names.map((n) => `--${n}`).join(", ");
  const { values, tokens } = parseArgs({
    args: [...args],
    options: Object.fromEntries(names.map((n) => [n, { type: "string" as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "positional")
      throw invalidArgument(OPERATION, "argument", token.value, `an option (${allowed})`, fix);
    if (token.kind !== "option") continue;
    if (!known.includes(token.name)) {
      const nearest = nearestKey(token.name, known);
      throw invalidArgument(
        OPERATION,
        "option",
        token.rawName,
        known.length > 0 ? `one of ${allowed}` : "none (this command takes no options)",
        nearest ? `did you mean --${nearest}? (${fix})` : fix,
      );
    }
    if (token.value === undefined)
      throw invalidArgument(OPERATION, token.rawName, undefined, "followed by a value", fix);
  }
  return values as Partial<Record<Name, string>>;
}
