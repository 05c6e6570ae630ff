/**
 * Unary calls of `filesystem.Filesystem`: stat, makeDir, move, listDir,
 * remove. Reference: docs/envd.md#filesystem-service.
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { SandboxIacError } from "../../errors";
import { OPS } from "./constants";
import { callScope, effectiveUser, rpcOptions, type SandboxContext } from "./context";
import { toEntryInfo, type EntryInfo } from "./entry";
import { fromRpcError } from "./errors";
import { retryIdempotent } from "./idempotent";
import { checkDepth, checkPath, checkUser } from "./validate";

/** Options shared by filesystem calls. */
export interface FsCallOptions {
  /** Resolve relative paths and check permissions as this user. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** Aborts the call. @default none */
  signal?: AbortSignal | undefined;
  /** Deadline in milliseconds; 0 means none. @default the client's timeoutMs */
  timeoutMs?: number | undefined;
}

/** Options of {@link listDir}. */
export interface ListDirOptions extends FsCallOptions {
  /** How many levels to descend; 1 lists direct children only. @default 1 */
  depth?: number;
}

/** The filesystem part of the sandbox client. */
export interface FilesystemApi {
  /** Information about one entry; fails with `not_found` when it does not exist. Retried when transient. */
  stat(path: string, options?: FsCallOptions): Promise<EntryInfo>;
  /** True when `path` exists; a `not_found` is the only failure turned into false. */
  exists(path: string, options?: FsCallOptions): Promise<boolean>;
  /** Creates a directory and its parents; false when it already exists. */
  makeDir(path: string, options?: FsCallOptions): Promise<boolean>;
  /** Renames or moves, creating the destination's parents; returns the destination's entry. */
  move(source: string, destination: string, options?: FsCallOptions): Promise<EntryInfo>;
  /** Lists a directory (pre-order, sorted by name); the directory itself is not listed. Retried when transient. */
  listDir(path: string, options?: ListDirOptions): Promise<EntryInfo[]>;
  /** Removes a file or a directory tree; a missing path is not an error. */
  remove(path: string, options?: FsCallOptions): Promise<void>;
}

/** Builds the filesystem part over a shared context. */
export function createFilesystemApi(ctx: SandboxContext): FilesystemApi {
  function callOptions(operation: string, options: FsCallOptions) {
    return rpcOptions(ctx, {
      user: effectiveUser(ctx, checkUser(operation, options.user)),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  }

  async function stat(path: string, options: FsCallOptions = {}): Promise<EntryInfo> {
    checkPath(OPS.fsStat, "path", path);
    const call = callOptions(OPS.fsStat, options);
    const res = await retryIdempotent(async () => {
      try {
        return await ctx.filesystem.stat({ path }, call);
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.fsStat, path, options.signal));
      }
    }, options.signal);
    if (!res.entry)
      throw fromRpcError(
        new ConnectError("stat answered without an entry", Code.Internal),
        callScope(ctx, OPS.fsStat, path),
      );
    return toEntryInfo(res.entry);
  }

  return {
    stat,

    async exists(path, options = {}) {
      try {
        await stat(path, options);
        return true;
      } catch (err) {
        if (SandboxIacError.hasCode(err, "not_found")) return false;
        throw err;
      }
    },

    async makeDir(path, options = {}) {
      checkPath(OPS.fsMakeDir, "path", path);
      try {
        await ctx.filesystem.makeDir({ path }, callOptions(OPS.fsMakeDir, options));
        return true;
      } catch (err) {
        if (ConnectError.from(err).code === Code.AlreadyExists) return false;
        throw fromRpcError(err, callScope(ctx, OPS.fsMakeDir, path, options.signal));
      }
    },

    async move(source, destination, options = {}) {
      checkPath(OPS.fsMove, "source", source);
      checkPath(OPS.fsMove, "destination", destination);
      try {
        const res = await ctx.filesystem.move(
          { source, destination },
          callOptions(OPS.fsMove, options),
        );
        if (!res.entry) throw new ConnectError("move answered without an entry", Code.Internal);
        return toEntryInfo(res.entry);
      } catch (err) {
        throw fromRpcError(
          err,
          callScope(ctx, OPS.fsMove, `${source} -> ${destination}`, options.signal),
        );
      }
    },

    async listDir(path, options = {}) {
      checkPath(OPS.fsListDir, "path", path);
      const depth = checkDepth(OPS.fsListDir, options.depth);
      const call = callOptions(OPS.fsListDir, options);
      const res = await retryIdempotent(async () => {
        try {
          return await ctx.filesystem.listDir({ path, depth }, call);
        } catch (err) {
          throw fromRpcError(err, callScope(ctx, OPS.fsListDir, path, options.signal));
        }
      }, options.signal);
      return res.entries.map(toEntryInfo);
    },

    async remove(path, options = {}) {
      checkPath(OPS.fsRemove, "path", path);
      try {
        await ctx.filesystem.remove({ path }, callOptions(OPS.fsRemove, options));
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.fsRemove, path, options.signal));
      }
    },
  };
}
