/**
 * Pause, resume and connect as the API asks them, under the sandbox's lock:
 * the state each needs (409 otherwise), and the team's limit around a
 * resume; pause-resume.ts does the processes' side.
 *
 * @module
 */
import { serviceError } from "../http";
import type { KnownSandbox } from "./known-sandbox";
import { locked } from "./manager-lock";
import type { ManagerState } from "./manager-state";
import { pauseLocked, resumeLocked } from "./pause-resume";
import type { SandboxRecord } from "./record";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS } from "./schemas";
import { extendEnd } from "./timeouts";

/** Resumes `sandbox` (locked, paused) under the team's limit of running sandboxes. */
async function resumeAdmitted(
  state: ManagerState,
  sandbox: KnownSandbox,
  timeoutSec: number,
): Promise<void> {
  const release = state.concurrency.admit();
  try {
    await resumeLocked(state.ctx, sandbox, timeoutSec);
  } finally {
    release();
  }
}

/** Pauses a running sandbox; `memory: false` stops its processes instead of freezing them. */
export async function pauseSandbox(
  state: ManagerState,
  sandboxID: string,
  memory: boolean,
): Promise<void> {
  await locked(state, sandboxID, async (sandbox) => {
    if (sandbox.record.state === "paused")
      throw serviceError("conflict", `Sandbox ${sandboxID} is already paused`);
    await pauseLocked(state.ctx, sandbox, memory, "sandbox paused");
  });
}

/** Resumes a paused sandbox (409 when running). */
export async function resumeSandbox(
  state: ManagerState,
  sandboxID: string,
  timeoutSec: number,
): Promise<SandboxRecord> {
  return locked(state, sandboxID, async (sandbox) => {
    if (sandbox.record.state === "running")
      throw serviceError("conflict", `Sandbox ${sandboxID} is already running`);
    await resumeAdmitted(state, sandbox, timeoutSec);
    return sandbox.record;
  });
}

/** Connects: extends a running sandbox's end, or resumes a paused one. */
export async function connectSandbox(
  state: ManagerState,
  sandboxID: string,
  timeoutSec: number | undefined,
): Promise<{ record: SandboxRecord; resumed: boolean }> {
  return locked(state, sandboxID, async (sandbox) => {
    if (sandbox.record.state === "running") {
      if (timeoutSec !== undefined) extendEnd(state, sandbox, Date.now() + timeoutSec * 1000);
      await state.writer.flush();
      return { record: sandbox.record, resumed: false };
    }
    await resumeAdmitted(state, sandbox, timeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
    return { record: sandbox.record, resumed: true };
  });
}
