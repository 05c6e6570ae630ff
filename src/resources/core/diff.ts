/**
 * Diffing driven by rules declared as data beside the fields: each resource's
 * args file exports a `ChangeRule` per input, and {@link diffByRules} reads it.
 *
 * @module
 */
import type { ChangeRule, DiffResult } from "./lifecycle";

/** Structural equality of JSON-like values (key order does not matter). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    // An absent value and an explicit undefined are the same input.
    return a === b || (a === undefined && b === undefined);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) if (!jsonEqual(ra[k], rb[k])) return false;
  return true;
}

/**
 * The dotted paths (`build.steps.1.run`, as check failures name properties) of
 * the values that differ between `prev` and `next` below `at`: objects are
 * compared key by key and lists element by element, so a changed step is
 * named by its index and field rather than as the whole list. A value added
 * or removed is named where it is (a list that grew: its new indexes).
 */
export function changedPaths(prev: unknown, next: unknown, at: string): string[] {
  if (jsonEqual(prev, next)) return [];
  const bothObjects =
    prev !== null && next !== null && typeof prev === "object" && typeof next === "object";
  if (!bothObjects || Array.isArray(prev) !== Array.isArray(next)) return [at];
  if (Array.isArray(prev) && Array.isArray(next)) {
    const paths: string[] = [];
    for (let i = 0; i < Math.max(prev.length, next.length); i++)
      paths.push(...changedPaths(prev[i], next[i], `${at}.${i}`));
    return paths;
  }
  const a = prev as Record<string, unknown>;
  const b = next as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].flatMap((k) =>
    changedPaths(a[k], b[k], `${at}.${k}`),
  );
}

/**
 * The rule of input `key`: a field missing from `rules` counts as `replace`,
 * so forgetting a rule errs on the safe side. Every adapter reads rules
 * through here.
 */
export function changeRuleOf(rules: Readonly<Record<string, ChangeRule>>, key: string): ChangeRule {
  return rules[key] ?? "replace";
}

/**
 * Compares old outputs with new inputs field by field and classifies each
 * changed field by its rule. A field missing from `rules` counts as `replace`,
 * so forgetting a rule errs on the safe side.
 */
export function diffByRules<I extends object>(
  olds: Partial<I>,
  news: I,
  rules: Readonly<Record<keyof I & string, ChangeRule>>,
  options: { isUnknown?: (value: unknown) => boolean; deleteBeforeReplace?: boolean } = {},
): DiffResult {
  const replaces: string[] = [];
  const updates: string[] = [];
  const keys = new Set([...Object.keys(rules), ...Object.keys(news)]) as Set<keyof I & string>;
  for (const key of keys) {
    const rule = changeRuleOf(rules, key);
    if (rule === "ignore") continue;
    const next = (news as Record<string, unknown>)[key];
    const prev = (olds as Record<string, unknown>)[key];
    // An unknown value (preview) may or may not change: report it as a change.
    const changed = options.isUnknown?.(next) === true || !jsonEqual(prev, next);
    if (!changed) continue;
    (rule === "replace" ? replaces : updates).push(key);
  }
  const result: DiffResult = {
    changes: replaces.length + updates.length > 0,
    replaces,
    updates,
  };
  if (replaces.length > 0 && options.deleteBeforeReplace) result.deleteBeforeReplace = true;
  return result;
}
