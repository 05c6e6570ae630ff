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
  /**
   * How long the step's provider calls took, in ms; absent for a `same` step
   * of `up` (no call is made). The CLI shows it as "created (12s)".
   */
  durationMs?: number | undefined;
}

/**
 * One line the dynamic-provider plugin printed. The CLI forwards the plugin's
 * stdout as `info` and its stderr as `info#err` diagnostics, with no URN (the
 * plugin never dials the engine), so `pulumi up` lists them under the stack in
 * its "Diagnostics:" section (docs/pulumi-provider.md#provider-output-and-diagnostics).
 */
export interface Diagnostic {
  severity: "info" | "info#err";
  message: string;
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
  /** What the provider printed, line by line, in the order received: what `pulumi up` shows. */
  diagnostics: Diagnostic[];
  /** Plugin and program stdout/stderr, interleaved as received. */
  log: string;
  /** Which command ran on which stack, and how long it took end to end (ms). */
  run: { command: Command; project: string; stack: string; durationMs: number };
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
