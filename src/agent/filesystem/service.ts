/**
 * The `filesystem.Filesystem` Connect service (docs/envd.md#filesystem-service).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  WatchDirResponseSchema,
  type Filesystem,
  type WatchDirRequest,
  type WatchDirResponse,
} from "../../gen/envd/filesystem/filesystem_pb";
import { DEFAULT_KEEPALIVE_SECONDS, ENVD_HEADERS } from "../../wire/envd";
import { entryInfo } from "../entry-info";
import { EventQueue, keepaliveIntervalMs } from "../event-queue";
import { fsError, rpcPath, rpcUser } from "../rpc-context";
import type { AgentState } from "../state";
import { listDir } from "./list-dir";
import { makeDirsAs } from "./ownership";
import { isNetworkMount, watchDir } from "./watch";
import type { WatcherTable } from "./watchers";

async function existingEntry(abs: string) {
  const entry = await entryInfo(abs).catch((err: unknown) => {
    throw fsError(err, abs);
  });
  if (!entry) throw new ConnectError(`file not found: ${abs}`, Code.NotFound);
  return entry;
}

/** Checks a watch target; `not_found`, `invalid_argument` as envd. */
async function checkWatchTarget(
  abs: string,
  req: Pick<WatchDirRequest, "allowNetworkMounts">,
): Promise<void> {
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(abs);
  } catch (err) {
    throw fsError(err, `path ${abs}`);
  }
  if (!st.isDirectory())
    throw new ConnectError(`path ${abs} is not a directory`, Code.InvalidArgument);
  if (!req.allowNetworkMounts && isNetworkMount(abs)) {
    throw new ConnectError(
      `path ${abs} is on a network mount: set allowNetworkMounts to watch it`,
      Code.InvalidArgument,
    );
  }
}

/** Builds the Filesystem service implementation. */
export function filesystemService(
  state: AgentState,
  watchers: WatcherTable,
): ServiceImpl<typeof Filesystem> {
  return {
    async stat(req, ctx) {
      const abs = rpcPath(state, rpcUser(state, ctx), req.path);
      return { entry: await existingEntry(abs) };
    },

    async makeDir(req, ctx) {
      const user = rpcUser(state, ctx);
      const abs = rpcPath(state, user, req.path);
      const st = await fs.promises.stat(abs).catch(() => undefined);
      if (st?.isDirectory())
        throw new ConnectError(`directory ${abs} already exists`, Code.AlreadyExists);
      if (st)
        throw new ConnectError(
          `path ${abs} already exists and is not a directory`,
          Code.InvalidArgument,
        );
      try {
        await makeDirsAs(abs, user);
      } catch (err) {
        throw fsError(err, `create directory ${abs}`);
      }
      return { entry: await existingEntry(abs) };
    },

    async move(req, ctx) {
      const user = rpcUser(state, ctx);
      const source = rpcPath(state, user, req.source);
      const destination = rpcPath(state, user, req.destination);
      if (!(await fs.promises.lstat(source).catch(() => undefined))) {
        throw new ConnectError(`source file not found: ${source}`, Code.NotFound);
      }
      try {
        await makeDirsAs(path.dirname(destination), user);
        await fs.promises.rename(source, destination);
      } catch (err) {
        throw fsError(err, `move ${source} to ${destination}`);
      }
      return { entry: await existingEntry(destination) };
    },

    async listDir(req, ctx) {
      const abs = rpcPath(state, rpcUser(state, ctx), req.path);
      let realRoot: string;
      try {
        realRoot = await fs.promises.realpath(abs);
        if (!(await fs.promises.stat(realRoot)).isDirectory()) {
          throw new ConnectError(`path ${abs} is not a directory`, Code.InvalidArgument);
        }
      } catch (err) {
        if (err instanceof ConnectError) throw err;
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          throw new ConnectError(`directory not found: ${abs}`, Code.NotFound);
        }
        throw fsError(err, `list ${abs}`);
      }
      try {
        return { entries: await listDir(abs, Math.max(1, req.depth), realRoot, ctx.signal) };
      } catch (err) {
        throw fsError(err, `list ${abs}`);
      }
    },

    async remove(req, ctx) {
      // An empty path means the working directory everywhere else; removing
      // it (or the root) is never what a caller meant, so both are refused.
      if (req.path.trim() === "") {
        throw new ConnectError(
          "remove: the path is empty: name the file or directory to remove",
          Code.InvalidArgument,
        );
      }
      const abs = rpcPath(state, rpcUser(state, ctx), req.path);
      if (abs === "/") {
        throw new ConnectError(
          `remove '${req.path}': refusing to remove the root directory: name what to remove under it`,
          Code.InvalidArgument,
        );
      }
      try {
        await fs.promises.rm(abs, { recursive: true, force: true });
      } catch (err) {
        throw fsError(err, `remove ${abs}`);
      }
      return {};
    },

    async *watchDir(req, ctx) {
      const abs = rpcPath(state, rpcUser(state, ctx), req.path);
      await checkWatchTarget(abs, req);
      const queue = new EventQueue<WatchDirResponse>();
      queue.keepalive(
        keepaliveIntervalMs(
          ctx.requestHeader.get(ENVD_HEADERS.keepalivePingInterval),
          DEFAULT_KEEPALIVE_SECONDS,
        ),
        () => create(WatchDirResponseSchema, { event: { case: "keepalive", value: {} } }),
      );
      const stop = watchDir({
        dir: abs,
        recursive: req.recursive,
        includeEntry: req.includeEntry,
        onEvent: (e) =>
          queue.push(create(WatchDirResponseSchema, { event: { case: "filesystem", value: e } })),
        onError: (err) =>
          queue.fail(new ConnectError(`watcher error: ${err.message}`, Code.Internal)),
      });
      const onAbort = () => queue.fail(ConnectError.from(ctx.signal.reason));
      ctx.signal.addEventListener("abort", onAbort);
      try {
        yield create(WatchDirResponseSchema, { event: { case: "start", value: {} } });
        yield* queue;
      } finally {
        ctx.signal.removeEventListener("abort", onAbort);
        stop();
      }
    },

    async createWatcher(req, ctx) {
      const abs = rpcPath(state, rpcUser(state, ctx), req.path);
      await checkWatchTarget(abs, req);
      const watcherId = watchers.add((onEvent, onError) =>
        watchDir({
          dir: abs,
          recursive: req.recursive,
          includeEntry: req.includeEntry,
          onEvent,
          onError,
        }),
      );
      return { watcherId };
    },

    async getWatcherEvents(req) {
      const res = watchers.drain(req.watcherId);
      if (!res) throw new ConnectError(`watcher with id ${req.watcherId} not found`, Code.NotFound);
      if (res.error) throw new ConnectError(`watcher error: ${res.error.message}`, Code.Internal);
      return { events: res.events };
    },

    async removeWatcher(req) {
      if (!watchers.remove(req.watcherId)) {
        throw new ConnectError(`watcher with id ${req.watcherId} not found`, Code.NotFound);
      }
      return {};
    },
  };
}
