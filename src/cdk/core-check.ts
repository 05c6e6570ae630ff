/**
 * Synth-time validation of a construct's attributes with the core's own input
 * schema (the same zod schema the Pulumi and Terraform adapters check with), so
 * a CDK user sees `cpu_count: must be an integer >= 1` when running the app,
 * before any plan. Only literal values are checked: anything late-bound (a
 * reference to another resource, a variable) is left to the provider at plan.
 *
 * Terraform attribute names are matched to core field names through the
 * schema itself (`memory_mb` is the field whose snake_case is `memory_mb`,
 * i.e. `memoryMB`); keys of map attributes (`env`, `envs`) are data and keep
 * their spelling.
 *
 * @module
 */
import type { ZodType } from "zod";
import type { CdkRuntime } from "./runtime";

/** Terraform's `snake_case` attribute name for a core field name (`memoryMB` → `memory_mb`). */
export function terraformName(coreName: string): string {
  return coreName.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/** The parts of zod's schema definitions walked here (zod v4 `_zod.def`). */
interface Def {
  type: string;
  innerType?: ZodType;
  in?: ZodType;
  shape?: Record<string, ZodType>;
  valueType?: ZodType;
  element?: ZodType;
}

/** A schema's definition with optional/default/transform wrappers taken off. */
function unwrap(schema: ZodType | undefined): Def | undefined {
  let def = schema && (schema as unknown as { _zod: { def: Def } })._zod.def;
  while (def) {
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (!inner) return def;
    def = (inner as unknown as { _zod: { def: Def } })._zod.def;
  }
  return def;
}

/** The core field of an object schema named `attribute` in Terraform, else `attribute`. */
function fieldFor(def: Def | undefined, attribute: string): string {
  for (const field of Object.keys(def?.shape ?? {})) {
    if (terraformName(field) === attribute) return field;
  }
  return attribute;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/** Renames Terraform attributes to core fields along `schema`; unset (null) attributes are dropped. */
function toCore(value: unknown, schema: ZodType | undefined, runtime: CdkRuntime): unknown {
  if (runtime.Token.isUnresolved(value)) return value;
  const def = unwrap(schema);
  if (Array.isArray(value)) {
    return value.map((v) => toCore(v, def?.type === "array" ? def.element : undefined, runtime));
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    if (def?.type === "record") out[key] = toCore(v, def.valueType, runtime);
    else {
      const field = fieldFor(def, key);
      out[field] = toCore(v, def?.shape?.[field], runtime);
    }
  }
  return out;
}

/** The value at `path` in `root`, and whether anything on the way is late-bound. */
function walk(root: unknown, path: readonly PropertyKey[], runtime: CdkRuntime) {
  let value = root;
  for (const key of path) {
    if (runtime.Token.isUnresolved(value)) return { value, lateBound: true };
    value =
      typeof value === "object" && value !== null
        ? (value as Record<PropertyKey, unknown>)[key]
        : undefined;
  }
  return { value, lateBound: runtime.Token.isUnresolved(value) };
}

/** `["build", "steps", 1, "env", "APP_HOME"]` → `build.steps[1].env["APP_HOME"]`. */
function attributePath(schema: ZodType, path: readonly PropertyKey[]): string {
  let out = "";
  let def = unwrap(schema);
  for (const key of path) {
    if (typeof key === "number") {
      out += `[${key}]`;
      def = unwrap(def?.type === "array" ? def.element : undefined);
    } else if (def?.type === "record") {
      out += `[${JSON.stringify(String(key))}]`;
      def = unwrap(def.valueType);
    } else {
      out += (out ? "." : "") + terraformName(String(key));
      def = unwrap(def?.shape?.[String(key)]);
    }
  }
  return out;
}

function shorten(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * Every problem the core schema finds in `attributes` (a resource's
 * synthesized attributes, Terraform names), one line each:
 * `<attribute path>: <what is allowed> (received <value>)`.
 * Problems in late-bound values are skipped: the provider reports them at plan.
 * Values under a field named in `hidden` (core names, e.g. `envs`) are never
 * shown, since they may hold secrets.
 */
export function coreProblems(
  schema: ZodType,
  attributes: Record<string, unknown>,
  runtime: CdkRuntime,
  hidden: readonly string[] = [],
): string[] {
  const input = toCore(attributes, schema, runtime);
  const result = schema.safeParse(input);
  if (result.success) return [];
  const problems: string[] = [];
  for (const issue of result.error.issues) {
    const { value, lateBound } = walk(input, issue.path, runtime);
    if (lateBound) continue;
    const where = attributePath(schema, issue.path) || "(resource)";
    const received = issue.path.some((key) => hidden.includes(String(key)))
      ? "a hidden value"
      : value === undefined
        ? "nothing"
        : shorten(JSON.stringify(value));
    problems.push(`${where}: ${issue.message} (received ${received})`);
  }
  return problems;
}
