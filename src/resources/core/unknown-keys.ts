/**
 * Unknown keys in a resource's inputs: the strict schemas refuse them, and the
 * failure names the key and the nearest known one (`timeout` ->
 * `timeoutSeconds`, `comands` -> `commands`, `sandbox_id` -> `sandboxID`), so
 * a misspelt setting is an error with its fix, never silently dropped.
 *
 * @module
 */
import type { ZodType } from "zod";

/** The internal definition zod keeps on every schema. */
interface Def {
  type: string;
  shape?: Record<string, ZodType>;
  innerType?: ZodType;
  element?: ZodType;
  valueType?: ZodType;
  in?: ZodType;
  options?: readonly ZodType[];
  left?: ZodType;
  right?: ZodType;
  getter?: () => ZodType;
}

function defOf(schema: ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The schemas that `schema` may be, wrappers (optional, pipe, lazy...) removed. */
function unwrap(schema: ZodType): ZodType[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in ?? def.getter?.();
  if (inner !== undefined) return unwrap(inner);
  if (def.type === "union" && def.options) return def.options.flatMap(unwrap);
  if (def.type === "intersection" && def.left && def.right)
    return [...unwrap(def.left), ...unwrap(def.right)];
  return [schema];
}

/** The schemas found at `path` below `schema` (several where a union branches). */
function schemasAt(schema: ZodType, path: readonly PropertyKey[]): ZodType[] {
  let current = unwrap(schema);
  for (const key of path) {
    current = current.flatMap((s) => {
      const def = defOf(s);
      if (def.type === "object") {
        const child = def.shape?.[String(key)];
        return child ? unwrap(child) : [];
      }
      if (def.type === "array" && def.element) return unwrap(def.element);
      if (def.type === "record" && def.valueType) return unwrap(def.valueType);
      return [];
    });
  }
  return current;
}

/** The keys the object(s) at `path` below `schema` know, sorted. */
export function knownKeysAt(schema: ZodType, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  for (const s of schemasAt(schema, path)) {
    const def = defOf(s);
    if (def.type === "object") for (const k of Object.keys(def.shape ?? {})) keys.add(k);
  }
  return [...keys].sort();
}

/** What kind of value `value` is, without showing it. */
export function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Case, `_` and `-` do not count: `sandbox_id` and `sandboxID` are the same word. */
function folded(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, "");
}

/** The edit distance of `a` and `b`, an adjacent swap counting as one edit. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known key the user most likely meant by `key`, or undefined when none is
 * close: the same word in another case or separator, a key that starts with
 * or contains it (`timeout` -> `timeoutSeconds`), or one a few typos away.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const wanted = folded(key);
  let best: { key: string; score: number } | undefined;
  for (const candidate of known) {
    const have = folded(candidate);
    let score = distance(wanted, have);
    if (score > 0 && wanted.length >= 3) {
      if (have.startsWith(wanted) || wanted.startsWith(have)) score = Math.min(score, 1.5);
      else if (have.includes(wanted)) score = Math.min(score, 1.75);
    }
    const allowed = Math.max(2, Math.floor(wanted.length / 3));
    if (score <= allowed && (best === undefined || score < best.score))
      best = { key: candidate, score };
  }
  return best?.key;
}

/**
 * The reason shown for an unknown key: the key, what kind of value it was
 * given (`given`, never the value), the nearest known key, every known key.
 */
export function unknownKeyReason(key: string, known: readonly string[], given: string): string {
  const nearest = nearestKey(key, known);
  const hint = nearest === undefined ? "" : `: did you mean ${JSON.stringify(nearest)}?`;
  const list = known.length > 0 ? ` Known keys: ${known.join(", ")}` : "";
  return `unknown key ${JSON.stringify(key)} (got ${given})${hint}${list}`;
}
