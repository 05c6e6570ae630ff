/**
 * A plan made ahead of apply (Terraform's), decided in the core: the change
 * from the stored outputs to inputs some of which are not known yet, which
 * outputs stay known through it, and the outputs local files give at plan
 * time. Values not known yet, and the defaults of the change and output
 * rules, are handled here and nowhere else; the adapter only marks its
 * unknowns (`isUnknown`) and writes the answer in its own shape.
 *
 * @module
 */
import { type OutputRule, type ResourceDescriptor, recomputedBy } from "./descriptor";
import { changeRuleOf } from "./diff";
import type { DiffResult, ResourceLifecycle } from "./lifecycle";

/** How a plan is made: where local paths resolve, and which values are not known yet. */
export interface PlanningOptions {
  /** The directory relative local paths are resolved against (see ResourceContext.baseDir). */
  baseDir: string;
  /** True for the adapter's marker of a value known only after apply. */
  isUnknown: (value: unknown) => boolean;
}

/** True when `value` is, or holds at any depth, a value not known yet. */
export function holdsUnknown(value: unknown, isUnknown: (value: unknown) => boolean): boolean {
  if (isUnknown(value)) return true;
  if (Array.isArray(value)) return value.some((v) => holdsUnknown(v, isUnknown));
  if (value !== null && typeof value === "object")
    return Object.values(value).some((v) => holdsUnknown(v, isUnknown));
  return false;
}

/**
 * The planned change from `olds` (stored outputs) to `news` (inputs). An
 * input that is or holds an unknown value counts as changed by its change
 * rule; the lifecycle's `diff` compares it as if it kept its old value, so
 * normalisation and local-file hashing never meet an unknown. With every
 * input known this is exactly the lifecycle's `diff`, which is what apply
 * acts on (Terraform plans again, with every value known, right before it
 * applies).
 */
export async function planChange(
  descriptor: ResourceDescriptor,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  options: PlanningOptions,
): Promise<DiffResult> {
  const pending = Object.keys(news).filter((k) => holdsUnknown(news[k], options.isUnknown));
  const known = { ...news };
  for (const key of pending) known[key] = olds[key];
  const diff = await descriptor.lifecycle.diff(olds, known, options);
  const replaces = new Set(diff.replaces);
  const updates = new Set(diff.updates);
  for (const key of pending) {
    const rule = changeRuleOf(descriptor.changeRules, key);
    if (rule === "replace") replaces.add(key);
    else if (rule === "update") updates.add(key);
  }
  return {
    ...diff,
    changes: diff.changes || replaces.size + updates.size > 0,
    replaces: [...replaces],
    updates: [...updates],
  };
}

/** The rule of output `name`: one not listed is `recomputed`, so a forgotten rule errs on "not known yet". */
export function outputRuleOf(descriptor: ResourceDescriptor, name: string): OutputRule {
  return descriptor.outputRules[name] ?? "recomputed";
}

/**
 * True when an output under `rule`, now `prior`, keeps its value through
 * `change`: always when nothing changes; never through a replacement; through
 * an update unless the rule recomputes it there or it has no value yet (a
 * kept sandbox killed out of band, provisioned again by this update).
 */
export function outputKnownAfter(rule: OutputRule, change: DiffResult, prior: unknown): boolean {
  if (change.replaces.length === 0 && change.updates.length === 0) return true;
  if (change.replaces.length > 0 || prior === undefined || prior === null) return false;
  return !recomputedBy(rule, new Set(change.updates));
}

/**
 * The outputs local files give before anything is created (the lifecycle's
 * `planOutputs`), or none while an input is not known yet or the resource
 * has no such outputs.
 */
export async function planTimeOutputs(
  lifecycle: ResourceLifecycle<unknown, object>,
  news: Record<string, unknown>,
  options: PlanningOptions,
): Promise<Record<string, unknown>> {
  if (!lifecycle.planOutputs || holdsUnknown(news, options.isUnknown)) return {};
  return (await lifecycle.planOutputs(news, { baseDir: options.baseDir })) as Record<
    string,
    unknown
  >;
}
