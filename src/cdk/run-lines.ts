/**
 * `run` in the constructs takes a shell line or a list of lines, in a
 * Template step and in a Provisioner command alike (the core's rule: a list
 * means its lines joined with " && "). The generated bindings type `run` the
 * way the Terraform schema publishes it (a step's as a list, a command's as a
 * dynamic value the generator renders as a map), so the constructs hand them
 * the form with the same meaning: a step's line as a one-element list, a
 * command's list as its joined line (a list would be turned into a map by
 * the binding, and terraform refuses lists mixed with strings in one list).
 *
 * @module
 */
import { joinRunLines } from "../resources/core/run-lines";
import type { CdkRuntime } from "./runtime";

/** `T` with `run` as a shell line or a list of lines. */
export type WithRunLines<T> = Omit<T, "run"> & {
  /** A shell line, or a list of lines run as one line joined with " && ". */
  readonly run?: string | string[];
};

function isLines(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((line) => typeof line === "string");
}

function mapRuns(items: unknown, runtime: CdkRuntime, convert: (run: unknown) => unknown): unknown {
  if (!Array.isArray(items) || runtime.Token.isUnresolved(items)) return items;
  return items.map((item: unknown) => {
    if (item === null || typeof item !== "object" || !("run" in item)) return item;
    if (runtime.Token.isUnresolved(item.run)) return item;
    return { ...item, run: convert(item.run) };
  });
}

/** `build` with each step's `run` as a list (`"a"` is `["a"]`: the same step). */
export function buildWithListRuns<T>(build: T, runtime: CdkRuntime): T {
  if (build === null || typeof build !== "object" || runtime.Token.isUnresolved(build))
    return build;
  const steps = (build as { steps?: unknown }).steps;
  if (steps === undefined) return build;
  const listed = mapRuns(steps, runtime, (run) => (typeof run === "string" ? [run] : run));
  return { ...build, steps: listed };
}

/** `commands` with each `run` list as its joined line (`["a", "b"]` is `"a && b"`: the same command). */
export function commandsWithJoinedRuns<T>(commands: T, runtime: CdkRuntime): T {
  return mapRuns(commands, runtime, (run) => (isLines(run) ? joinRunLines(run) : run)) as T;
}
