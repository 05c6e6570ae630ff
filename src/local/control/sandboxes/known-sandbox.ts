/**
 * The in-memory state of one sandbox next to its persisted record: its
 * runtime handle, its timeout timer, the proxied connections to cut when it
 * stops being reachable, and the lock its state changes run under.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import type { SandboxIacError } from "../../../errors";
import { serviceError } from "../http";
import type { SandboxRecord } from "./record";

/** An exchange in flight through the proxy, which the manager cuts when its sandbox stops. */
export interface ProxiedExchange {
  /**
   * Ends the exchange because the sandbox is gone: an answer not begun yet
   * becomes the proxy's 502, a response already streaming breaks off.
   */
  cut(): void;
}

/** One sandbox known to the manager (running or paused). */
export interface KnownSandbox {
  record: SandboxRecord;
  /** The started processes; undefined while stopped. */
  processes: RuntimeSandbox | undefined;
  /** True while paused with its memory kept (cgroup frozen). */
  frozen: boolean;
  timer: NodeJS.Timeout | undefined;
  connections: Set<ProxiedExchange>;
  /** Settles when the last queued state change is done. */
  lock: Promise<void>;
  /** True once killed: queued state changes must not touch it. */
  gone: boolean;
}

/** A running, unfrozen sandbox as the proxy reaches it: its record and its processes. */
export interface ReachableSandbox {
  record: SandboxRecord;
  processes: RuntimeSandbox;
}

/** The state of a sandbox with no processes started yet. */
export function newKnownSandbox(record: SandboxRecord): KnownSandbox {
  return {
    record,
    processes: undefined,
    frozen: false,
    timer: undefined,
    connections: new Set(),
    lock: Promise.resolve(),
    gone: false,
  };
}

/** Runs `fn` after every state change queued before it on `sandbox`. */
export async function lockedEntry<T>(sandbox: KnownSandbox, fn: () => Promise<T>): Promise<T> {
  const prev = sandbox.lock;
  let release!: () => void;
  sandbox.lock = new Promise<void>((r) => (release = r));
  await prev;
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * Registers an exchange on `sandbox`. Returns the function that unregisters it
 * (called when the exchange ends).
 */
export function addConnection(sandbox: KnownSandbox, exchange: ProxiedExchange): () => void {
  sandbox.connections.add(exchange);
  return () => void sandbox.connections.delete(exchange);
}

/** Cuts every proxied exchange of `sandbox`. */
export function dropConnections(sandbox: KnownSandbox): void {
  const exchanges = [...sandbox.connections];
  sandbox.connections.clear();
  for (const e of exchanges) e.cut();
}

/** The 404 of an unknown sandbox (docs/control-api.md#sandbox-endpoints). */
export function notFound(sandboxID: string): SandboxIacError {
  return serviceError(
    "not_found",
    `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`,
  );
}
