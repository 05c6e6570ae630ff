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
import { dropConnections, type Live } from "./known-sandbox";
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
  arm(l: Live): void;
}

/** Makes `rt` the processes of `l`, watching for them to die on their own. */
export function attach(ctx: PauseResumeContext, l: Live, rt: RuntimeSandbox): void {
  l.rt = rt;
  l.frozen = false;
  // A sandbox whose init dies on its own (OOM, crash) keeps its layer: report it paused.
  void rt.exited.then(() => {
    if (l.rt !== rt || l.gone) return;
    l.rt = undefined;
    dropConnections(l);
    if (l.record.state === "running") {
      l.record.state = "paused";
      l.record.endAt = new Date().toISOString();
      appendLog(l.record, "warn", "sandbox processes exited unexpectedly; sandbox paused", {});
      disarm(l);
      void ctx.flush().catch(() => undefined);
    }
  });
}

/** Stops the processes of `l` (its layer stays) and cuts its connections. */
export async function stopProcesses(l: Live): Promise<void> {
  disarm(l);
  dropConnections(l);
  const rt = l.rt;
  l.rt = undefined;
  if (!rt) return;
  // Frozen tasks cannot die until thawed.
  if (l.frozen) await rt.thaw().catch(() => undefined);
  l.frozen = false;
  await rt.stop();
}

/** Pauses `l`: freezes its processes when `memory`, else stops them; logs `message`. */
export async function pauseLocked(
  ctx: PauseResumeContext,
  l: Live,
  memory: boolean,
  message: string,
): Promise<void> {
  disarm(l);
  dropConnections(l);
  if (memory && l.rt) {
    await l.rt.freeze();
    l.frozen = true;
  } else await stopProcesses(l);
  l.record.state = "paused";
  l.record.endAt = new Date().toISOString();
  appendLog(l.record, "info", message, {});
  await ctx.flush();
}

/** Resumes `l` (thaws or boots it again) with its end at now + `timeoutSec`. */
export async function resumeLocked(
  ctx: PauseResumeContext,
  l: Live,
  timeoutSec: number,
): Promise<void> {
  if (l.rt && l.frozen) {
    await l.rt.thaw();
    l.frozen = false;
  } else {
    const rt = await bootSandbox(l.record, {
      runtime: ctx.runtime,
      token: ctx.tokenOf(l.record),
    });
    attach(ctx, l, rt);
  }
  const now = Date.now();
  l.record.state = "running";
  l.record.startedAt = new Date(now).toISOString();
  l.record.endAt = new Date(now + timeoutSec * 1000).toISOString();
  appendLog(l.record, "info", "sandbox resumed", {});
  ctx.arm(l);
  await ctx.flush();
}

/** Runs `fn` with `l` frozen when it runs (a consistent copy of its layer); the caller holds its lock. */
export async function whileFrozen<T>(l: Live, fn: () => Promise<T>): Promise<T> {
  const rt = l.record.state === "running" && !l.frozen ? l.rt : undefined;
  if (rt) await rt.freeze();
  try {
    return await fn();
  } finally {
    if (rt) await rt.thaw();
  }
}
