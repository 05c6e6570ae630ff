/**
 * Where `sandbox-iac serve` takes its API key from. A key on the command line
 * is readable by every host user in `/proc/<pid>/cmdline`, so the file and
 * the environment come first in the README; `--api-key` stays for
 * throw-away services.
 *
 * @module
 */
import * as fs from "node:fs";
import { SandboxIacError, invalidArgument } from "../errors";
import { ENV_VARS } from "../wire/control";
import type { ServeArgs } from "./args";

const OPERATION = "cli";

/** The key and where it came from (for the log; never the key itself). */
export interface ServeApiKey {
  /** undefined: the service uses the key kept in its data dir. */
  key: string | undefined;
  source: "--api-key" | "--api-key-file" | typeof ENV_VARS.apiKey | "data dir";
}

/**
 * The API key of `serve`: `--api-key`, else the first line of
 * `--api-key-file`, else `$E2B_API_KEY` when set and non-empty, else none
 * (the data dir's own). `warn` receives a line when the key file is readable
 * by other host users.
 */
export function serveApiKey(
  args: Pick<ServeArgs, "apiKey" | "apiKeyFile">,
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void,
): ServeApiKey {
  if (args.apiKey !== undefined) return { key: args.apiKey, source: "--api-key" };
  if (args.apiKeyFile !== undefined)
    return { key: readKeyFile(args.apiKeyFile, warn), source: "--api-key-file" };
  const fromEnv = env[ENV_VARS.apiKey]?.trim();
  if (fromEnv) return { key: fromEnv, source: ENV_VARS.apiKey };
  return { key: undefined, source: "data dir" };
}

function readKeyFile(file: string, warn: (line: string) => void): string {
  let text: string;
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new SandboxIacError(
      "invalid_argument",
      `--api-key-file ${JSON.stringify(file)} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): give a file holding the key on its first line, e.g. \`umask 077; echo e2b_<hex> > ${file}\``,
      { operation: OPERATION, field: "--api-key-file", cause: err },
    );
  }
  const key = text.split("\n")[0]?.trim() ?? "";
  if (!key)
    throw invalidArgument(
      OPERATION,
      "--api-key-file",
      file,
      "a file whose first line is the key",
      "write the key on the file's first line",
    );
  if (mode & 0o077)
    warn(
      `--api-key-file ${file} has mode 0${(mode & 0o777).toString(8)}: other host users may read the key; chmod 600 it`,
    );
  return key;
}
