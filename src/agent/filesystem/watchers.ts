/**
 * Watchers created by `CreateWatcher` that outlive the request, polled with
 * `GetWatcherEvents` (docs/envd.md#filesystem-behaviour).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { WatchEvent } from "./watch";

interface PolledWatcher {
  events: WatchEvent[];
  error: Error | undefined;
  stop: () => void;
}

/** The table of polled watchers. */
export class WatcherTable {
  private readonly watchers = new Map<string, PolledWatcher>();

  /** Registers a watcher started by `start`, which gets the sinks to report to. */
  add(
    start: (onEvent: (e: WatchEvent) => void, onError: (err: Error) => void) => () => void,
  ): string {
    const id = randomUUID();
    const w: PolledWatcher = { events: [], error: undefined, stop: () => undefined };
    w.stop = start(
      (e) => w.events.push(e),
      (err) => {
        // A watcher error is sticky: every later poll returns it.
        w.error ??= err;
      },
    );
    this.watchers.set(id, w);
    return id;
  }

  /** The events buffered since the last poll, cleared; undefined for an unknown id. */
  drain(id: string): { events: WatchEvent[]; error: Error | undefined } | undefined {
    const w = this.watchers.get(id);
    if (!w) return undefined;
    return { events: w.events.splice(0), error: w.error };
  }

  /** Stops and forgets a watcher. @returns false for an unknown id */
  remove(id: string): boolean {
    const w = this.watchers.get(id);
    if (!w) return false;
    w.stop();
    this.watchers.delete(id);
    return true;
  }
}
