/**
 * The warm pool's members step aside while a claimed sandbox's create and
 * first command run: from a claim until that sandbox's first exchange ended
 * (or the refill delay passed), every member not claimed, starting, warming
 * up or ready, is in the runtime's background (`SandboxRuntime.setBackground`:
 * the cgroup's `cpu.idle`, so it gets the CPU only when no sandbox of a user
 * wants it, and a member still starting begins its next host phase only once
 * it is back, `runtime/background-set.ts`). Members are work done ahead of
 * demand; the sandbox a user is waiting on comes first.
 *
 * Why: each member is its own cgroup, as heavy for the scheduler as the
 * claimed sandbox. On 2 cores, a sandbox's agent answered `commands.run` in
 * 1.5-1.7 ms on a quiet machine, 2.9-3.1 ms beside two busy loops outside any
 * sandbox, and 4.2-6.0 ms while other sandboxes started. Members kept in the
 * background all the time warmed up too slowly for bench:local's loop of
 * creates (16 of 50 creates took a member still warming up, against none),
 * so they step aside only for the claim's short window (docs/benchmarks.md).
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";

/** Moves sandboxes to the background or back; undefined when the runtime cannot. */
export type SetBackground = SandboxRuntime["setBackground"] | undefined;

/** The CPU priority of the warm pool's members not claimed. */
export class MemberPriority {
  /** Members not claimed and not gone, by sandbox id. */
  private readonly ids = new Set<string>();
  /** True while the members are in the background. */
  private yielding = false;

  constructor(private readonly setBackground: SetBackground) {}

  /** A new member, before its start: in the background at once while the others are. */
  add(id: string): void {
    this.ids.add(id);
    if (this.yielding) this.setBackground?.([id], true);
  }

  /** A member claimed, discarded or failed: in the foreground, and no longer moved. */
  release(id: string): void {
    if (!this.ids.delete(id)) return;
    if (this.yielding) this.setBackground?.([id], false);
  }

  /** Every member steps aside (a claim handed one over). */
  stepAside(): void {
    if (this.yielding) return;
    this.yielding = true;
    this.setBackground?.(this.ids, true);
  }

  /** Every member is back in the foreground (the claimed sandbox's first exchange ended). */
  resume(): void {
    if (!this.yielding) return;
    this.yielding = false;
    this.setBackground?.(this.ids, false);
  }
}
