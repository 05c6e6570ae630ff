/**
 * The in-memory state of one sandbox next to its persisted record: its
 * runtime handle, its timeout timer, the proxied connections to cut when it
 * stops being reachable, and the lock its state changes run under.
 *
 * @module
 */
import type { Duplex } from "node:stream";
import type { RuntimeSandbox } from "../../runtime/types";
import { ApiError } from "../http";
import type { SandboxRecord } from "./record";

/** One sandbox known to the manager (running or paused). */
export interface Live {
  record: SandboxRecord;
  /** The started processes; undefined while stopped. */
  rt: RuntimeSandbox | undefined;
  /** True while paused with its memory kept (cgroup frozen). */
  frozen: boolean;
  timer: NodeJS.Timeout | undefined;
  connections: Set<Duplex>;
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
 * Registers a proxied connection on `l`. Returns the function that
 * unregisters it.
 */
export function addConnection(l: Live, socket: Duplex): () => void {
  l.connections.add(socket);
  const untrack = (): void => void l.connections.delete(socket);
  socket.once("close", untrack);
  return () => {
    socket.off("close", untrack);
    untrack();
  };
}

/** Destroys every proxied connection of `l`. */
export function dropConnections(l: Live): void {
  // Abrupt on purpose: the SDK must see a broken stream, not a clean end.
  for (const s of l.connections) s.destroy();
  l.connections.clear();
}

/** The 404 of an unknown sandbox (wire-protocol.md 3). */
export function notFound(sandboxID: string): ApiError {
  return new ApiError(404, `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`);
}
