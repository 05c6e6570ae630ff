/**
 * What the sandbox manager holds: the sandboxes it knows, the state file's
 * writer, the warm pool, the team's limit, the contexts of its state changes.
 * Types only: the functions of the manager's state changes take it, and
 * manager-open.ts makes it (so none of them imports back what makes it).
 *
 * @module
 */
import type { JsonStateWriter } from "../state-file";
import type { ConcurrencyLimit } from "./concurrency";
import type { CreateContext } from "./create";
import type { KnownSandbox } from "./known-sandbox";
import type { SandboxManagerOptions } from "./manager-options";
import type { MetricsStore } from "./metrics";
import type { PauseResumeContext } from "./pause-resume";
import type { PreInits } from "./pre-init";
import type { SandboxLifecycle } from "./runtime-lifecycle";
import type { WarmPool } from "./warm-pool";

/** Everything a `SandboxManager` holds, shared by the functions of its state changes. */
export interface ManagerState {
  readonly opts: SandboxManagerOptions;
  /** Resource samples of running sandboxes. */
  readonly metrics: MetricsStore;
  readonly known: Map<string, KnownSandbox>;
  readonly writer: JsonStateWriter;
  sampler: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Started sandboxes waiting for a create; never part of `known`. */
  readonly pool: WarmPool;
  /** The `/init` each warm key's members get during their warm-up. */
  readonly preInits: PreInits;
  /** What the pause/resume state changes need of the manager. */
  readonly ctx: PauseResumeContext;
  /** What create needs of the manager. */
  readonly createCtx: CreateContext;
  /** Sandboxes whose first proxied exchange ended (the pool's refill waits for it). */
  readonly exchanged: WeakSet<KnownSandbox>;
  /** The team's concurrent-sandbox limit (the service has one API key, so one team). */
  readonly concurrency: ConcurrencyLimit;
  /** Every start and destroy of a sandbox the manager makes: a destroy also forgets its tokens. */
  readonly lifecycle: SandboxLifecycle;
}
