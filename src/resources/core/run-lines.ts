/**
 * The `run` field of a Template step and of a Provisioner command: one shell
 * line, or a list of lines run as one line joined with ` && `, the rule of the
 * official SDK's `runCmd(string | string[])`. Both forms with the same joined
 * line mean the same command: diffs compare the joined line, so rewriting
 * `"a"` as `["a"]` (or `["a", "b"]` as `"a && b"`) runs nothing again.
 *
 * @module
 */
import { z } from "zod";

/** The SDK's separator (`runCmd`: `commands.join(" && ")`). */
const RUN_SEPARATOR = " && ";

/** What a `run` value may be, in words every adapter's user reads the same way. */
const RUN_ALLOWED =
  'must be a shell line ("apt-get update") or a non-empty list of shell lines ' +
  '(["apt-get update", "apt-get install -y git"], run as one line joined with " && ")';

/** A `run` field: a non-empty shell line or a non-empty list of them. */
export function runLinesSchema() {
  const line = z.string().min(1, { error: RUN_ALLOWED });
  return z.union([line, z.array(line).min(1, { error: RUN_ALLOWED })], { error: RUN_ALLOWED });
}

/** The one shell line a `run` value stands for (a list joined with ` && `, as the SDK does). */
export function joinRunLines(run: string | readonly string[]): string {
  return typeof run === "string" ? run : run.join(RUN_SEPARATOR);
}

/**
 * `run` as the line it means, for comparing: a known string or list of
 * strings becomes the joined line; anything else (a value not known yet,
 * a wrong type check reports) is left as it is.
 */
export function normaliseRunLines(run: unknown): unknown {
  if (typeof run === "string") return run;
  if (Array.isArray(run) && run.every((line) => typeof line === "string")) return joinRunLines(run);
  return run;
}
