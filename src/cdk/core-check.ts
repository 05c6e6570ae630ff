/**
 * Synth-time validation of a construct's attributes with the core's own input
 * schema (the same zod schema the Pulumi and Terraform adapters check with), so
 * a CDK user sees `cpu_count: must be an integer >= 1` when running the app,
 * before any plan. Only literal values are checked: anything late-bound (a
 * reference to another resource, a variable) is left to the provider at plan.
 *
 * @module
 */
import type { ZodType } from "zod";
import type { CdkRuntime } from "./runtime";

/** Terraform's `snake_case` attribute name for a core field name (`memoryMB` → `memory_mb`). */
export function terraformName(coreName: string): string {
  return coreName.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/** The core field name of a Terraform attribute (`memory_mb` → `memoryMB`, `sandbox_id` → `sandboxID`). */
export function coreName(terraformAttribute: string): string {
  return terraformAttribute
    .split("_")
    .map((part, i) => {
      if (i === 0) return part;
      // The core spells these acronyms in capitals (templateID, memoryMB).
      if (part === "id" || part === "mb") return part.toUpperCase();
      return part.charAt(0).toUpperCase() + part.slice(1);
    })
    .join("");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

/** Renames Terraform attributes to core fields, recursively; unset (null) attributes are dropped. */
function toCore(value: unknown, runtime: CdkRuntime): unknown {
  if (runtime.Token.isUnresolved(value)) return value;
  if (Array.isArray(value)) return value.map((v) => toCore(v, runtime));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue;
    out[coreName(key)] = toCore(v, runtime);
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

function shorten(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** `["build", "steps", 1, "copy"]` → `build.steps[1].copy`. */
function attributePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += (out ? "." : "") + terraformName(String(key));
  }
  return out;
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
  const input = toCore(attributes, runtime);
  const result = schema.safeParse(input);
  if (result.success) return [];
  const problems: string[] = [];
  for (const issue of result.error.issues) {
    const { value, lateBound } = walk(input, issue.path, runtime);
    if (lateBound) continue;
    const where = attributePath(issue.path) || "(resource)";
    const received = issue.path.some((key) => hidden.includes(String(key)))
      ? "a hidden value"
      : value === undefined
        ? "nothing"
        : shorten(JSON.stringify(value));
    problems.push(`${where}: ${issue.message} (received ${received})`);
  }
  return problems;
}
