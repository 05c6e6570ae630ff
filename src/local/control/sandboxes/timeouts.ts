/**
 * A running sandbox's end as the manager moves it: set (may shorten),
 * refreshed or extended by a connect (never shortens), and its timer
 * (lifetime.ts) armed with what its expiry does (expiry.ts: a pause, or a
 * kill through kill.ts).
 *
 * @module
 */
import { serviceError } from "../http";
import { expire } from "./expiry";
import { killLocked } from "./kill";
import type { KnownSandbox } from "./known-sandbox";
import { arm, extendTo } from "./lifetime";
import { locked } from "./manager-lock";
import type { ManagerState } from "./manager-state";
import { pauseLocked } from "./pause-resume";

/** Arms the timeout of a running sandbox on its `endAt`. */
export function armEnd(state: ManagerState, sandbox: KnownSandbox): void {
  arm(sandbox, (expired) => void onTimeout(state, expired));
}

/** Moves the end of `sandbox` to `endMs` when that is later, re-arming its timeout. */
export function extendEnd(state: ManagerState, sandbox: KnownSandbox, endMs: number): void {
  extendTo(sandbox, endMs, (expired) => void onTimeout(state, expired));
}

/** Overwrites a running sandbox's end: now + `timeoutSec` (may shorten). */
export async function setEnd(
  state: ManagerState,
  sandboxID: string,
  timeoutSec: number,
): Promise<void> {
  await locked(state, sandboxID, async (sandbox) => {
    if (sandbox.record.state !== "running")
      throw serviceError(
        "conflict",
        `Sandbox ${sandboxID} is not running (state '${sandbox.record.state}'); resume it first`,
      );
    sandbox.record.endAt = new Date(Date.now() + Math.max(0, timeoutSec) * 1000).toISOString();
    armEnd(state, sandbox);
    await state.writer.flush();
  });
}

/** Extends a running sandbox's end to at least now + `durationSec`. */
export async function refreshEnd(
  state: ManagerState,
  sandboxID: string,
  durationSec: number,
): Promise<void> {
  await locked(state, sandboxID, async (sandbox) => {
    if (sandbox.record.state !== "running") return;
    extendEnd(state, sandbox, Date.now() + durationSec * 1000);
    await state.writer.flush();
  });
}

async function onTimeout(state: ManagerState, sandbox: KnownSandbox): Promise<void> {
  await expire(
    {
      pause: (x, reason, memory) => pauseLocked(state.ctx, x, memory, reason),
      kill: (x) => killLocked(state, x),
      log: state.opts.log,
    },
    sandbox,
  );
}
