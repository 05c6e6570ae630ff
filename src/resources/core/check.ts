/**
 * Input checking with zod, mapped to {@link CheckFailure}s: every failure with
 * its dotted path, the value received, and what is allowed.
 *
 * @module
 */
import type { ZodType } from "zod";
import { describeValue, registerSecretsIn } from "../../errors";
import type { CheckFailure, CheckOptions, CheckResult } from "./lifecycle";
import { kindOf, knownKeysAt, unknownKeyReason } from "./unknown-keys";

/** Replaces unknown values (preview) by `undefined` deep in `value`, recording their paths. */
function stripUnknowns(
  value: unknown,
  isUnknown: (v: unknown) => boolean,
  path: string,
  unknownPaths: Set<string>,
): unknown {
  if (isUnknown(value)) {
    unknownPaths.add(path);
    return undefined;
  }
  if (Array.isArray(value))
    return value.map((v, i) => stripUnknowns(v, isUnknown, join(path, String(i)), unknownPaths));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = stripUnknowns(v, isUnknown, join(path, k), unknownPaths);
    return out;
  }
  return value;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/**
 * Parses `news` with `schema` and returns every failure as `{property, reason}`.
 * The values named in `sensitive` (top-level inputs, or dotted paths to nested
 * fields such as `build.fromImageRegistry.password`) are never shown, nor is
 * any value that holds one.
 * Values that are still unknown (and anything beneath them) are not reported:
 * they are checked again once known. The inputs returned are `news` itself:
 * the schemas hold no transforms or defaults, and check changes no value.
 */
export function checkWithSchema<I>(
  schema: ZodType<I>,
  news: unknown,
  options: CheckOptions = {},
  sensitive: readonly string[] = [],
): CheckResult<I> {
  // Secret inputs are known secrets from here on: redacted by value in every
  // log line and error (a setup command echoing an env value, say).
  if (news !== null && typeof news === "object") {
    for (const name of sensitive) registerSecretsIn(valueAt(news, name.split(".")));
  }
  const unknownPaths = new Set<string>();
  const candidate = options.isUnknown
    ? stripUnknowns(news, options.isUnknown, "", unknownPaths)
    : news;
  const parsed = schema.safeParse(candidate);
  // The inputs as given, never the parsed copy: check changes no value.
  if (parsed.success) return { inputs: news as I, failures: [] };
  const failures: CheckFailure[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === "unrecognized_keys") {
      // One failure per key, with the nearest known key; the value is never
      // shown (a misspelt `env` may hold secrets), only what kind it is.
      const known = knownKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const property = [...issue.path.map(String), key].join(".");
        const kind = kindOf(valueAt(candidate, [...issue.path, key]));
        failures.push({ property, reason: unknownKeyReason(key, known, kind) });
      }
      continue;
    }
    const property = issue.path.map(String).join(".") || "(inputs)";
    const isUnderUnknown = [...unknownPaths].some(
      (p) =>
        property === p || property.startsWith(`${p}.`) || p.startsWith(`${property}.`) || p === "",
    );
    if (isUnderUnknown) continue;
    const value = valueAt(candidate, issue.path);
    // A secret input is never repeated in a message, only what kind of value it was.
    // A failure on an object holding a nested secret hides it only when the secret is there.
    const holdsSecret = sensitive.some(
      (p) =>
        property === p ||
        property.startsWith(`${p}.`) ||
        (p.startsWith(`${property}.`) && valueAt(candidate, p.split(".")) !== undefined),
    );
    const got = holdsSecret ? `${kindOf(value)} (not shown: secret)` : describeValue(value);
    failures.push({ property, reason: `${issue.message}, got ${got}` });
  }
  // Every failure was under an unknown value: accept the raw inputs for now.
  if (failures.length === 0) return { inputs: news as I, failures: [] };
  return { failures };
}
