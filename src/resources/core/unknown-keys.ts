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

/**
 * The fields of an input as one adapter names them (Terraform's snake_case,
 * the CDK's camelCase, the core's own names): what {@link unknownKeysIn}
 * walks. Built by the adapter from the same tree that publishes its schema.
 */
export type NamedShape =
  | { readonly kind: "object"; readonly fields: ReadonlyMap<string, NamedShape> }
  | { readonly kind: "list" | "map"; readonly element: NamedShape }
  | { readonly kind: "value" };

/** One step of a path: an object key, a list index or a map key. */
export type PathStep =
  | { readonly kind: "key"; readonly name: string }
  | { readonly kind: "index"; readonly index: number }
  | { readonly kind: "mapKey"; readonly key: string };

/** One unknown key: its path in the adapter's naming and the reason to show. */
export interface UnknownKey {
  /** `commands[0].timeout_secs` (Terraform) or `commands[0].timeoutSecs` (TypeScript). */
  readonly path: string;
  /** The same path as steps, the unknown key last. */
  readonly steps: readonly PathStep[];
  readonly reason: string;
}

/** `path` extended by an object key: `a` + `b` -> `a.b`. */
function keyPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** `path` extended by a list index or map key: `a` + 0 -> `a[0]`, `a` + "k" -> `a["k"]`. */
function indexPath(path: string, index: number | string): string {
  return `${path}[${typeof index === "number" ? index : JSON.stringify(index)}]`;
}

/** The text of a path: `commands[0].timeout_secs`. */
export function stepsText(steps: readonly PathStep[]): string {
  return steps.reduce(
    (path, s) =>
      s.kind === "key"
        ? keyPath(path, s.name)
        : indexPath(path, s.kind === "index" ? s.index : s.key),
    "",
  );
}

/**
 * Every key of `value`, at any depth, that `shape` does not know, with its
 * path and the nearest known key, both in the adapter's naming. Values
 * `isLate` recognises (references, tokens, expressions not evaluated yet)
 * are skipped: they are checked once known. Top-level keys in `known`
 * (meta-arguments such as `count`) are accepted besides the fields.
 */
export function unknownKeysIn(
  shape: NamedShape,
  value: unknown,
  options: {
    isLate?: (v: unknown) => boolean;
    steps?: readonly PathStep[];
    known?: readonly string[];
  } = {},
): UnknownKey[] {
  const { isLate = () => false, steps = [] } = options;
  const below = (child: NamedShape, v: unknown, step: PathStep) =>
    unknownKeysIn(child, v, { isLate, steps: [...steps, step] });
  if (value === null || value === undefined || isLate(value)) return [];
  switch (shape.kind) {
    case "value":
      return [];
    case "list":
      return Array.isArray(value)
        ? value.flatMap((v, i) => below(shape.element, v, { kind: "index", index: i }))
        : [];
    case "map":
      return typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value).flatMap(([k, v]) =>
            below(shape.element, v, { kind: "mapKey", key: k }),
          )
        : [];
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return [];
      const known = [...shape.fields.keys()].sort();
      return Object.entries(value).flatMap(([k, v]) => {
        const field = shape.fields.get(k);
        if (field) return below(field, v, { kind: "key", name: k });
        if (options.known?.includes(k)) return [];
        const at = [...steps, { kind: "key" as const, name: k }];
        return [{ path: stepsText(at), steps: at, reason: unknownKeyReason(k, known, kindOf(v)) }];
      });
    }
  }
}

/**
 * A core property path (`commands.0.timeoutSecs`, as `check` reports it) as
 * TypeScript writes it: `commands[0].timeoutSecs`.
 */
export function propertyText(property: string): string {
  return property
    .split(".")
    .reduce(
      (path, segment) =>
        /^\d+$/.test(segment) && path ? indexPath(path, Number(segment)) : keyPath(path, segment),
      "",
    );
}
