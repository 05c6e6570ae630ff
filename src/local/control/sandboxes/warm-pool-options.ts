/**
 * The warm pool's options and their defaults (see warm-pool.ts for what the
 * pool does with them).
 *
 * @module
 */
import { availableParallelism } from "node:os";
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "../../runtime/types";
import type { SandboxLifecycle } from "./runtime-lifecycle";

/** What a pool member is started with: a {@link SandboxSpec} without its id. */
export type WarmSpec = Omit<SandboxSpec, "sandboxID">;

/** Options of {@link WarmPool}. */
export interface WarmPoolOptions {
  /**
   * Starts and destroys the members; its `sandboxesMemoryBytes` sizes the
   * pool's memory share, and its `setBackground` moves members out of a
   * claimed sandbox's way (member-priority.ts).
   */
  runtime: SandboxLifecycle &
    Partial<Pick<SandboxRuntime, "sandboxesMemoryBytes" | "setBackground">>;
  /** Generates the id of a new member (the id its sandbox will have). */
  newId: () => string;
  log: (line: string) => void;
  /**
   * Run once on every new member before it is offered, so that the agent's
   * first request (lazily compiled code paths, a cold page cache for the
   * shell) is not paid by a create. A failure discards the member.
   * @default nothing is run
   */
  warmUp?: ((processes: RuntimeSandbox, spec: WarmSpec) => Promise<void>) | undefined;
  /**
   * Ready members kept per key while it is quiet; 0 disables the pool.
   * @default 2
   */
  size?: number | undefined;
  /**
   * The most members a key grows to under demand (never below `size`).
   * @default 8
   */
  maxSize?: number | undefined;
  /**
   * Members starting at once, over every key, while creates come slower
   * than the pool refills.
   * @default the machine's cores (`os.availableParallelism()`), at least 2
   */
  concurrency?: number | undefined;
  /**
   * Members starting at once while creates come faster: the pool starts as
   * many as creates arrive during one member's start (creates per second
   * times the seconds a member takes to be ready), up to this.
   * @default `concurrency`
   */
  maxConcurrency?: number | undefined;
  /**
   * The most memory, in MiB, the members together may be limited to (each
   * counts its key's `memoryMB`, ready or starting).
   * @default a quarter of the runtime's `sandboxesMemoryBytes`; no bound when the runtime gives none
   */
  memoryShareMB?: number | undefined;
  /**
   * A key not claimed for this long shrinks back to `size`.
   * @default 30000
   */
  idleMs?: number | undefined;
  /**
   * How long after a claim that handed a member over the refill starts at
   * the latest, ms: it starts as soon as a claimed sandbox's first exchange
   * ended (the create's answer and its first command come before, and a
   * start would share the cores with them). A claim that found no member
   * refills at once. With 40 ms, bench:local's loop of 50 creates (2 cores)
   * went from 35.6 to 30.1 ms create -> first command p50 (4 runs each);
   * starting at the first exchange instead, from 34.1 / 23.6 / 25.4 to
   * 18.9 / 21.3 / 22.3 ms (3 alternated pairs), every create then finding
   * a ready member (39-48 of 50 before).
   * @default 40
   */
  refillDelayMs?: number | undefined;
  /**
   * The clock the creates' rate and the members' times are read from, ms.
   * @default performance.now
   */
  now?: (() => number) | undefined;
  /**
   * Keys kept warm at once; the least recently claimed key beyond it is emptied.
   * @default 3
   */
  maxKeys?: number | undefined;
}

/** Default members per key. */
const DEFAULT_WARM_POOL_SIZE = 2;
/** Default most members per key under demand. */
const DEFAULT_WARM_POOL_MAX_SIZE = 8;
/** The fewest members starting at once by default, also on one core (a start waits on I/O too). */
const MIN_WARM_POOL_CONCURRENCY = 2;
/** The share of the sandboxes' memory the pool may hold by default. */
const DEFAULT_WARM_POOL_MEMORY_SHARE = 1 / 4;
const MIB = 1024 * 1024;
/** Default quiet time after which a grown key shrinks back. */
const DEFAULT_WARM_POOL_IDLE_MS = 30_000;
/** Default wait between a claim and its refill, ms (see {@link WarmPoolOptions.refillDelayMs}). */
const DEFAULT_REFILL_DELAY_MS = 40;
/** Default number of keys kept warm. */
const DEFAULT_WARM_POOL_KEYS = 3;

/** {@link WarmPoolOptions} with every default applied and every bound enforced. */
export interface ResolvedWarmPoolOptions {
  size: number;
  maxSize: number;
  concurrency: number;
  maxConcurrency: number;
  memoryShareMB: number;
  idleMs: number;
  refillDelayMs: number;
  maxKeys: number;
  now: () => number;
}

/** Applies the defaults of {@link WarmPoolOptions}. */
export function resolveWarmPoolOptions(opts: WarmPoolOptions): ResolvedWarmPoolOptions {
  const size = Math.max(0, Math.floor(opts.size ?? DEFAULT_WARM_POOL_SIZE));
  const concurrency = Math.max(
    1,
    Math.floor(opts.concurrency ?? Math.max(MIN_WARM_POOL_CONCURRENCY, availableParallelism())),
  );
  const budget = opts.runtime.sandboxesMemoryBytes;
  return {
    size,
    maxSize: Math.max(size, Math.floor(opts.maxSize ?? DEFAULT_WARM_POOL_MAX_SIZE)),
    concurrency,
    maxConcurrency: Math.max(concurrency, Math.floor(opts.maxConcurrency ?? concurrency)),
    memoryShareMB:
      opts.memoryShareMB ??
      (budget ? Math.floor((budget * DEFAULT_WARM_POOL_MEMORY_SHARE) / MIB) : Infinity),
    idleMs: Math.max(0, opts.idleMs ?? DEFAULT_WARM_POOL_IDLE_MS),
    refillDelayMs: Math.max(0, opts.refillDelayMs ?? DEFAULT_REFILL_DELAY_MS),
    maxKeys: Math.max(1, Math.floor(opts.maxKeys ?? DEFAULT_WARM_POOL_KEYS)),
    now: opts.now ?? (() => performance.now()),
  };
}
