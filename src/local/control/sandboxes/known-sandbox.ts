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
export interface Live {
  record: SandboxRecord;
  /** The started processes; undefined while stopped. */
  rt: RuntimeSandbox | undefined;
  /** True while paused with its memory kept (cgroup frozen). */
  frozen: boolean;
  timer: NodeJS.Timeout | undefined;
  connections: Set<ProxiedExchange>;
  /** Settles when the last queued state change is done. */
  lock: Promise<void>;
  /** True once killed: queued state changes must not touch it. */
  gone: boolean;
}

/** The state of a sandbox with no processes started yet. */
export function newLive(record: SandboxRecord): Live {
  return {
    record,
    rt: undefined,
    frozen: false,
    timer: undefined,
    connections: new Set(),
    lock: Promise.resolve(),
    gone: false,
  };
}

/** Runs `fn` after every state change queued before it on `l`. */
export async function lockedEntry<T>(l: Live, fn: () => Promise<T>): Promise<T> {
  const prev = l.lock;
  let release!: () => void;
  l.lock = new Promise<void>((r) => (release = r));
  await prev;
  try {
    return await fn();
  } finally {
    release();
  }
}

/**
 * Registers an exchange on `l`. Returns the function that unregisters it
 * (called when the exchange ends).
 */
export function addConnection(l: Live, exchange: ProxiedExchange): () => void {
  l.connections.add(exchange);
  return () => void l.connections.delete(exchange);
}

/** Cuts every proxied exchange of `l`. */
export function dropConnections(l: Live): void {
  const exchanges = [...l.connections];
  l.connections.clear();
  for (const e of exchanges) e.cut();
}

/** The 404 of an unknown sandbox (docs/control-api.md#sandbox-endpoints). */
export function notFound(sandboxID: string): SandboxIacError {
  return serviceError(
    "not_found",
    `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`,
  );
}
