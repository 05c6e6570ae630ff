/**
 * Starting a sandbox's processes: the runtime start, the agent's `/init`,
 * the template's start command and, on a first start, waiting for its ready
 * command. Used by create and by resuming a sandbox whose processes are gone.
 *
 * @module
 */
import { SandboxIacError } from "../../../errors";
import { existsSync } from "node:fs";
import type { RuntimeSandbox, SandboxBind, SandboxRuntime } from "../../runtime/types";
import { agentClient, initAgent, type AgentClient } from "../agent-client";
import { serviceError } from "../http";
import type { SandboxRecord } from "./record";
import { initSettingsOf, sameInit, type SentInit } from "./pre-init";

/** The process tag of the template's start command. */
const START_CMD_TAG = "start_cmd";
/** Pause between two runs of the ready command. */
const READY_POLL_MS = 200;
/** How long the ready command may keep failing before create gives up. */
const READY_TIMEOUT_MS = 60_000;
/** One run of the ready command may take at most this long. */
const READY_RUN_TIMEOUT_MS = 10_000;

/** What {@link bootSandbox} needs besides the record. */
export interface BootOptions {
  /** Starts the sandbox when no `started` one is given. */
  runtime: Pick<SandboxRuntime, "start">;
  /** The access token, when the sandbox is secure. */
  token: string | undefined;
  /** The template's ready command; only waited for when given (first start). */
  readyCmd?: string | undefined;
  /**
   * A runtime sandbox already started for this record (a warm-pool member
   * whose id is the record's id); it is initialised instead of starting one.
   * @default undefined: the runtime starts the sandbox
   */
  started?: RuntimeSandbox | undefined;
  /**
   * What `started`'s warm-up sent as its `/init` (pre-init.ts); the same
   * settings are not sent again.
   * @default undefined: no `/init` was sent
   */
  preInit?: Promise<SentInit> | undefined;
}

/**
 * Starts the sandbox's processes on its (possibly existing) writable layer and
 * initialises the agent. On failure everything started is stopped again; the
 * writable layer is left for the caller to destroy or keep.
 */
export async function bootSandbox(
  record: SandboxRecord,
  opts: BootOptions,
): Promise<RuntimeSandbox> {
  const processes =
    opts.started ??
    (await opts.runtime.start({
      sandboxID: record.sandboxID,
      layers: record.layers,
      cpuCount: record.cpuCount,
      memoryMB: record.memoryMB,
      allowInternetAccess: record.allowInternetAccess,
      binds: presentBinds(record),
      ...(record.network ? { network: record.network } : {}),
    }));
  try {
    // A warm-pool member started without rules: they are dynamic, so set them now.
    const n = record.network;
    if (
      opts.started &&
      n &&
      (n.allowOut?.length || n.denyOut?.length || n.rules || n.egressProxy)
    ) {
      await processes.setNetwork(n);
    }
    const access = { accessToken: opts.token };
    const wanted = initSettingsOf(record, opts.token);
    const held = await opts.preInit;
    if (!held?.confirmed || !sameInit(held.settings, wanted)) {
      await initAgent(processes, wanted.init, { ...access, heldToken: held?.settings.accessToken });
    }
    // A client only when there is a command to run: most creates (a warm-pool claim of a
    // template without start or ready command) end with /init.
    if (!record.startCmd && !opts.readyCmd) return processes;
    const agent = agentClient(processes, access);
    if (record.startCmd) {
      // Left running in the background: the agent keeps a process whose client went away.
      await agent.startDetached(record.startCmd, { tag: START_CMD_TAG });
    }
    if (opts.readyCmd) await waitReady(agent, record, opts.readyCmd);
    return processes;
  } catch (err) {
    await processes.stop().catch(() => undefined);
    throw err;
  }
}

/** The record's volume mounts whose volume still exists (a deleted one is not mounted again). */
function presentBinds(record: SandboxRecord): SandboxBind[] {
  return (record.volumeMounts ?? [])
    .filter((mount) => existsSync(mount.source))
    .map((mount) => ({ source: mount.source, target: mount.path }));
}

/** Runs the ready command every 200 ms until it exits 0, for at most 60 s. */
async function waitReady(
  agent: AgentClient,
  record: SandboxRecord,
  readyCmd: string,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "";
  for (;;) {
    try {
      const res = await (await agent.start(readyCmd, { timeoutMs: READY_RUN_TIMEOUT_MS })).wait();
      if (res.exitCode === 0) return;
      last = `exit code ${res.exitCode}${res.stderr ? `, stderr: ${res.stderr.slice(-200)}` : ""}`;
    } catch (err) {
      if (!SandboxIacError.is(err)) throw err;
      last = err.message;
    }
    if (Date.now() + READY_POLL_MS > deadline) break;
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  throw serviceError(
    "internal",
    `template '${record.templateID}': the ready command ${JSON.stringify(readyCmd)} did not succeed within ${READY_TIMEOUT_MS / 1000} s (last: ${last}); fix the template's readyCmd or its startCmd`,
  );
}
