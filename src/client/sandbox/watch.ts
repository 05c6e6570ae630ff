/**
 * Directory watches: the `WatchDir` stream, and the polling watchers
 * (`CreateWatcher` / `GetWatcherEvents` / `RemoveWatcher`) that outlive a
 * connection. Reference: docs/envd.md#filesystem-behaviour.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { WatchDirResponse } from "../../gen/envd/filesystem/filesystem_pb";
import { invalidArgument } from "../../errors";
import { OPS } from "./constants";
import { callScope, effectiveUser, rpcOptions, type SandboxContext } from "./context";
import { toFilesystemEvent, type FilesystemEvent } from "./entry";
import { fromRpcError } from "./errors";
import { checkPath, checkUser } from "./validate";

/** Options of {@link WatchApi.watchDir} and {@link WatchApi.createWatcher}. */
export interface WatchOptions {
  /** Also report changes in subdirectories. @default false */
  recursive?: boolean;
  /** Attach the entry's info to create, write and chmod events. @default false */
  includeEntry?: boolean;
  /** Act as this user. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** Stops the watch (watchDir) or aborts the call (createWatcher). @default none */
  signal?: AbortSignal | undefined;
  /** Deadline in milliseconds; for watchDir the whole watch ends then. @default none for watchDir, the client's timeoutMs otherwise */
  timeoutMs?: number | undefined;
}

/** A running directory watch: iterate it for events; `close()` ends it. */
export interface DirWatch extends AsyncIterable<FilesystemEvent> {
  /** Stops the watch; a pending iteration ends without error. */
  close(): void;
}

/** The watch part of the sandbox client. */
export interface WatchApi {
  /**
   * Starts watching `path`. Resolves once the server confirmed the watch
   * (its `start` message), so changes made after the await are reported.
   * Keepalives are hidden.
   */
  watchDir(path: string, options?: WatchOptions): Promise<DirWatch>;
  /** Creates a server-side watcher that buffers events until polled; returns its id. */
  createWatcher(path: string, options?: WatchOptions): Promise<string>;
  /** Returns and clears the events buffered by a watcher since the last call. */
  getWatcherEvents(
    watcherId: string,
    options?: { signal?: AbortSignal },
  ): Promise<FilesystemEvent[]>;
  /** Deletes a watcher. */
  removeWatcher(watcherId: string, options?: { signal?: AbortSignal }): Promise<void>;
}

function checkWatcherId(operation: string, id: unknown): string {
  if (typeof id !== "string" || id.length === 0) {
    throw invalidArgument(operation, "watcherId", id, "the id returned by createWatcher()");
  }
  return id;
}

/** Builds the watch part over a shared context. */
export function createWatchApi(ctx: SandboxContext): WatchApi {
  return {
    async watchDir(path, options = {}) {
      checkPath(OPS.fsWatchDir, "path", path);
      const user = effectiveUser(ctx, checkUser(OPS.fsWatchDir, options.user));
      const controller = new AbortController();
      const onAbort = () => controller.abort(options.signal?.reason);
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const errScope = callScope(ctx, OPS.fsWatchDir, path, controller.signal);
      const stream = ctx.filesystem.watchDir(
        {
          path,
          recursive: options.recursive ?? false,
          includeEntry: options.includeEntry ?? false,
        },
        rpcOptions(ctx, {
          user,
          stream: true,
          timeoutMs: options.timeoutMs,
          signal: controller.signal,
        }),
      );
      const iterator = stream[Symbol.asyncIterator]();
      const cleanup = () => options.signal?.removeEventListener("abort", onAbort);
      let first: IteratorResult<WatchDirResponse>;
      try {
        first = await iterator.next();
        if (first.done || first.value.event.case !== "start") {
          throw new ConnectError(
            `the watch stream began with ${first.done ? "its end" : String(first.value.event.case)} instead of start`,
            Code.Internal,
          );
        }
      } catch (err) {
        cleanup();
        controller.abort();
        throw fromRpcError(err, errScope);
      }
      let closed = false;
      return {
        close() {
          closed = true;
          cleanup();
          controller.abort();
        },
        async *[Symbol.asyncIterator]() {
          try {
            for (;;) {
              const next = await iterator.next();
              if (next.done) return;
              if (next.value.event.case === "filesystem")
                yield toFilesystemEvent(next.value.event.value);
            }
          } catch (err) {
            // close() aborts the request on purpose; that is the normal end, not a failure.
            if (closed) return;
            throw fromRpcError(err, errScope);
          } finally {
            cleanup();
            controller.abort();
          }
        },
      };
    },

    async createWatcher(path, options = {}) {
      checkPath(OPS.fsCreateWatcher, "path", path);
      const user = effectiveUser(ctx, checkUser(OPS.fsCreateWatcher, options.user));
      try {
        const res = await ctx.filesystem.createWatcher(
          {
            path,
            recursive: options.recursive ?? false,
            includeEntry: options.includeEntry ?? false,
          },
          rpcOptions(ctx, { user, timeoutMs: options.timeoutMs, signal: options.signal }),
        );
        return res.watcherId;
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.fsCreateWatcher, path, options.signal));
      }
    },

    async getWatcherEvents(watcherId, options = {}) {
      checkWatcherId(OPS.fsGetWatcherEvents, watcherId);
      try {
        // Not retried: the call clears the buffer, so a lost answer loses events.
        const res = await ctx.filesystem.getWatcherEvents(
          { watcherId },
          rpcOptions(ctx, { signal: options.signal }),
        );
        return res.events.map(toFilesystemEvent);
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.fsGetWatcherEvents, watcherId, options.signal));
      }
    },

    async removeWatcher(watcherId, options = {}) {
      checkWatcherId(OPS.fsRemoveWatcher, watcherId);
      try {
        await ctx.filesystem.removeWatcher(
          { watcherId },
          rpcOptions(ctx, { signal: options.signal }),
        );
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.fsRemoveWatcher, watcherId, options.signal));
      }
    },
  };
}
