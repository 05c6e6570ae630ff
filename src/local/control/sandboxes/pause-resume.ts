/**
 * The process side of a sandbox's state changes: attaching started
 * processes, stopping them, pausing (freeze or stop) and resuming (thaw or
 * boot again). Callers hold the sandbox's lock.
 *
 * @module
 */
import type { RuntimeSandbox, SandboxRuntime } from "../../runtime/types";
import { bootSandbox } from "./boot";
import { disarm } from "./lifetime";
import { dropConnections, type KnownSandbox } from "./known-sandbox";
import { appendLog } from "./logs";
import type { SandboxRecord } from "./record";

/** What the state changes need of the manager. */
export interface PauseResumeContext {
  runtime: SandboxRuntime;
  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined;
  /** Writes the state file. */
  flush(): Promise<void>;
  /** Arms the timeout of a running sandbox on its `endAt`. */
  arm(sandbox: KnownSandbox): void;
}

/** Attaches `processes` (just started) to `sandbox`, watching for them to die on their own. */
export function attach(
  ctx: PauseResumeContext,
  sandbox: KnownSandbox,
  processes: RuntimeSandbox,
): void {
  sandbox.processes = processes;
  sandbox.frozen = false;
  // A sandbox whose init dies on its own (OOM, crash) keeps its layer: report it paused.
  void processes.exited.then(() => {
    if (sandbox.processes !== processes || sandbox.gone) return;
    sandbox.processes = undefined;
    dropConnections(sandbox);
    if (sandbox.record.state === "running") {
      sandbox.record.state = "paused";
      sandbox.record.endAt = new Date().toISOString();
      appendLog(
        sandbox.record,
        "warn",
        "sandbox processes exited unexpectedly; sandbox paused",
        {},
      );
      disarm(sandbox);
      void ctx.flush().catch(() => undefined);
    }
  });
}

/** Stops the processes of `sandbox` (its layer stays) and cuts its connections. */
export async function stopProcesses(sandbox: KnownSandbox): Promise<void> {
  disarm(sandbox);
  dropConnections(sandbox);
  const processes = sandbox.processes;
  sandbox.processes = undefined;
  if (!processes) return;
  // Frozen tasks cannot die until thawed.
  if (sandbox.frozen) await processes.thaw().catch(() => undefined);
  sandbox.frozen = false;
  await processes.stop();
}

/** Pauses `sandbox`: freezes its processes when `memory`, else stops them; logs `message`. */
export async function pauseLocked(
  ctx: PauseResumeContext,
  sandbox: KnownSandbox,
  memory: boolean,
  message: string,
): Promise<void> {
  disarm(sandbox);
  dropConnections(sandbox);
  if (memory && sandbox.processes) {
    await sandbox.processes.freeze();
    sandbox.frozen = true;
  } else await stopProcesses(sandbox);
  sandbox.record.state = "paused";
  sandbox.record.endAt = new Date().toISOString();
  appendLog(sandbox.record, "info", message, {});
  await ctx.flush();
}

/** Resumes `sandbox` (thaws or boots it again) with its end at now + `timeoutSec`. */
export async function resumeLocked(
  ctx: PauseResumeContext,
  sandbox: KnownSandbox,
  timeoutSec: number,
): Promise<void> {
  if (sandbox.processes && sandbox.frozen) {
    await sandbox.processes.thaw();
    sandbox.frozen = false;
  } else {
    const processes = await bootSandbox(sandbox.record, {
      runtime: ctx.runtime,
      token: ctx.tokenOf(sandbox.record),
    });
    attach(ctx, sandbox, processes);
  }
  const now = Date.now();
  sandbox.record.state = "running";
  sandbox.record.startedAt = new Date(now).toISOString();
  sandbox.record.endAt = new Date(now + timeoutSec * 1000).toISOString();
  appendLog(sandbox.record, "info", "sandbox resumed", {});
  ctx.arm(sandbox);
  await ctx.flush();
}

/** Runs `fn` with `sandbox` frozen when it runs (a consistent copy of its layer); the caller holds its lock. */
export async function whileFrozen<T>(sandbox: KnownSandbox, fn: () => Promise<T>): Promise<T> {
  const processes =
    sandbox.record.state === "running" && !sandbox.frozen ? sandbox.processes : undefined;
  if (processes) await processes.freeze();
  try {
    return await fn();
  } finally {
    if (processes) await processes.thaw();
  }
}
