/**
 * The processes of the sandbox, by pid and tag. Ended processes stay findable
 * for {@link EXITED_RETENTION_MS} so a late Connect still gets the end event.
 *
 * @module
 */
import { EXITED_RETENTION_MS } from "../constants";
import type { ManagedProcess } from "./managed-process";

/** What identifies a process in requests. */
export type Selector =
  | { case: "pid"; value: number }
  | { case: "tag"; value: string }
  | { case: undefined; value?: undefined };

/** The agent's process table. */
export class ProcessRegistry {
  private readonly processes = new Map<number, ManagedProcess>();

  /** Adds a freshly started process and schedules its removal after it ends. */
  add(proc: ManagedProcess): void {
    this.processes.set(proc.pid, proc);
    proc.onEnd(() => {
      const t = setTimeout(() => {
        if (this.processes.get(proc.pid) === proc) this.processes.delete(proc.pid);
      }, EXITED_RETENTION_MS);
      t.unref();
    });
  }

  /** Processes that have not ended. */
  live(): ManagedProcess[] {
    return [...this.processes.values()].filter((p) => !p.ended);
  }

  /** The process selected, live or recently ended, or undefined. */
  find(selector: Selector): ManagedProcess | undefined {
    if (selector.case === "pid") return this.processes.get(selector.value);
    if (selector.case === "tag") {
      let found: ManagedProcess | undefined;
      // Prefer a live process when a tag was reused.
      for (const p of this.processes.values())
        if (p.tag === selector.value && (!found || !p.ended)) found = p;
      return found;
    }
    return undefined;
  }
}

/** envd's not-found message for `selector`. */
export function notFoundMessage(selector: Selector): string {
  if (selector.case === "tag") return `process with tag ${selector.value} not found`;
  return `process with pid ${selector.value ?? 0} not found`;
}
