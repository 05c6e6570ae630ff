/**
 * What one simulated Pulumi operation reports, shared by the runner (child
 * process) and the API (test process).
 *
 * @module
 */
import type { HarnessState } from "./state";

/** The kinds of step the harness reports, in the order they happened. */
export type OperationKind =
  | "create"
  | "update"
  | "replace"
  | "delete"
  | "same"
  | "read"
  | "refresh-update"
  | "refresh-deleted";

/** One step on one resource. */
export interface Operation {
  op: OperationKind;
  urn: string;
  type: string;
  name: string;
}

/** The simulated commands. */
export type Command = "up" | "preview" | "refresh" | "destroy";

/** The result of one simulated command. */
export interface HarnessResult {
  operations: Operation[];
  /**
   * Stack outputs with secrets unwrapped. Values not known yet (preview) are
   * the unknown sentinel string `UNKNOWN` from `./secrets`.
   */
  outputs: Record<string, unknown>;
  /** Top-level stack output keys whose value is or contains a secret. */
  secretOutputs: string[];
  /** The state after the command (for `preview`, the unchanged prior state). */
  state: HarnessState;
  /** Failures, each naming the step and the resource; empty on success. */
  errors: string[];
  /** Plugin and program stdout/stderr, interleaved as received. */
  log: string;
}

/** What the test process hands the runner process. */
export interface RunnerArgs {
  command: Command;
  programDir: string;
  stateFile: string;
  resultFile: string;
  project: string;
  stack: string;
  /** Namespaced stack config (`project:key`), values as strings. */
  config: Record<string, string>;
  /** Namespaced keys of `config` whose values are secret. */
  secretKeys: string[];
  /** Most steps run at once, like `pulumi up --parallel`. */
  parallel: number;
}

/** The file (beside the args file) the runner writes the plugin's pid to, so a timeout can kill it. */
export const PLUGIN_PID_FILE = "plugin.pid";
