/**
 * An in-memory runtime for the warm pool's scheduling tests: its starts stay
 * pending until the test completes them, so the order of events is exact,
 * and it records what the pool asks of it (stops, destroys, its background).
 * src/local/control/sandboxes/warm-pool.test.ts covers the pool on the real
 * runtime.
 */
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "../../src/local/runtime/types";
import type { WarmPool } from "../../src/local/control/sandboxes/warm-pool";
import { eventually } from "./eventually";

/** A runtime whose starts stay pending until {@link HeldRuntime.finishStarts}. */
export class HeldRuntime {
  readonly pending: { spec: SandboxSpec; done: (rt: RuntimeSandbox) => void }[] = [];
  readonly stopped: string[] = [];
  readonly destroyed: string[] = [];
  /** The most starts pending at one time. */
  maxPending = 0;
  /** Sandboxes in the background now (`setBackground`). */
  readonly background = new Set<string>();
  /** Ids that were in the background when their start began. */
  readonly startedInBackground: string[] = [];

  readonly runtime = {
    start: (spec: SandboxSpec) =>
      new Promise<RuntimeSandbox>((done) => {
        if (this.background.has(spec.sandboxID)) this.startedInBackground.push(spec.sandboxID);
        this.pending.push({ spec, done });
        this.maxPending = Math.max(this.maxPending, this.pending.length);
      }),
    destroy: (id: string) => {
      this.destroyed.push(id);
      return Promise.resolve();
    },
    setBackground: (ids: Iterable<string>, on: boolean) => {
      for (const id of ids) {
        if (on) this.background.add(id);
        else this.background.delete(id);
      }
    },
  } as unknown as SandboxRuntime;

  /** Completes every pending start. */
  finishStarts(): void {
    for (const { spec, done } of this.pending.splice(0)) {
      const id = spec.sandboxID;
      done({
        sandboxID: id,
        exited: new Promise<void>(() => undefined),
        stop: () => {
          this.stopped.push(id);
          return Promise.resolve();
        },
      } as unknown as RuntimeSandbox);
    }
  }
}

/** Completes starts until `p` has `count` ready members. */
export async function fillTo(rt: HeldRuntime, p: WarmPool, count: number): Promise<void> {
  await eventually(
    () => {
      rt.finishStarts();
      return Promise.resolve(p.readyCount === count && rt.pending.length === 0);
    },
    { timeoutMs: 5_000, intervalMs: 5 },
  );
}

/** Closes `p`, completing the starts it waits for. */
export async function closeFinishing(rt: HeldRuntime, p: WarmPool): Promise<void> {
  const closing = p.close();
  rt.finishStarts();
  await closing;
}
