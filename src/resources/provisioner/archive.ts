/**
 * Many small files as one tar stream: packed by the maintained `tar` package
 * straight into the stdin of `tar -x` running in the sandbox as the owning
 * user (the process API's `StreamInput`). Nothing is written to a temporary
 * file on either side, and the sandbox extracts while the archive is still
 * being packed and sent. It needs only the process API, so it works against
 * E2B's cloud as it does against the local service; a request per file (or
 * per multipart batch) costs the sandbox far more than one extraction.
 *
 * @module
 */
import * as posix from "node:path/posix";
import { PackSync, type WriteEntry } from "tar";
import type { SandboxClient } from "../../client/sandbox";
import { commandFailed } from "../../client/sandbox/errors";
import { SandboxIacError } from "../../errors";
import type { ManifestEntry } from "./manifest";

/**
 * Above this many small files of one user, they go up as one archive. Below
 * it a few multipart batches cost less than starting an extraction.
 */
export const ARCHIVE_MIN_FILES = 200;
/** Larger files go up on their own stream: an archive would copy their bytes once more. */
export const ARCHIVE_MAX_FILE_BYTES = 1024 * 1024;

/**
 * True when `remotePath` can be an archive member: no `..` component (tar
 * refuses those) and not a bare root or home directory.
 */
export function isArchivable(remotePath: string): boolean {
  const normal = posix.normalize(remotePath);
  if (normal.split("/").includes("..")) return false;
  return normal !== "/" && normal !== "." && !normal.endsWith("/");
}

/**
 * A hard-link table that never remembers: every member is written as a
 * regular file, as a per-file upload would create it, even when the local
 * files share an inode.
 */
const NO_LINKS = {
  get: (): undefined => undefined,
  set(): void {},
  has: (): boolean => false,
} as unknown as Map<`${number}:${number}`, string>;

/**
 * Members packed between two turns of the event loop: enough that yielding
 * costs nothing measurable, few enough (at most this many files of at most
 * {@link ARCHIVE_MAX_FILE_BYTES}) that other requests of the same process are
 * never held up for long.
 */
const PACK_SLICE_FILES = 64;

/**
 * Bytes of archive per `StreamInput` message: large enough that per-message
 * costs (framing, a write to tar's stdin) vanish, small enough that the
 * sandbox extracts the first members while later ones are still packed.
 */
const INPUT_CHUNK_BYTES = 1 << 20;

/** The operation named by the errors of an archive upload. */
const OPERATION = "provisioner.files";

/**
 * The archive of `entries` as chunks of about {@link INPUT_CHUNK_BYTES},
 * members named by their remote paths (relative to `/` or to the home
 * directory) and carrying their local modes. Packed as it is consumed, so
 * the reader's backpressure (the request to the sandbox, the sandbox's
 * `tar`) bounds what is held in memory.
 *
 * Packed with the `tar` package's synchronous packer, a slice of members at
 * a time: its asynchronous packer makes four trips through libuv's thread
 * pool per member (stat, open, read, close) and took about three times the
 * CPU for a tree of small files (bench/provisioner.js; 10,000 files of 1-8
 * KiB). A file gone or unreadable since the manifest throws.
 */
async function* packChunks(entries: readonly ManifestEntry[]): AsyncGenerator<Uint8Array> {
  // Members are written in the order they are added; one name per local file, in order.
  const names = new Map<string, string[]>();
  for (const e of entries) {
    const list = names.get(e.localPath) ?? [];
    list.push(posix.normalize(e.remotePath).replace(/^\/+/, ""));
    names.set(e.localPath, list);
  }
  let failure: unknown;
  let queued: Buffer[] = [];
  let queuedBytes = 0;
  const take = (): Buffer => {
    const out = Buffer.concat(queued, queuedBytes);
    queued = [];
    queuedBytes = 0;
    return out;
  };
  const pack = new PackSync({
    cwd: "/",
    portable: true,
    follow: true,
    noDirRecurse: true,
    linkCache: NO_LINKS,
    onWriteEntry(entry: WriteEntry) {
      const name = names.get(entry.absolute)?.shift();
      if (name !== undefined) entry.path = name;
    },
  });
  pack.on("error", (err: unknown) => (failure ??= err));
  // A synchronous packer emits its data during add() and end().
  pack.on("data", (chunk: Buffer) => {
    queued.push(chunk);
    queuedBytes += chunk.length;
  });
  for (let i = 0; i < entries.length; i++) {
    pack.add(entries[i].localPath);
    if (failure !== undefined) throw SandboxIacError.from(failure, { operation: OPERATION });
    if (queuedBytes >= INPUT_CHUNK_BYTES) yield take();
    else if ((i + 1) % PACK_SLICE_FILES === 0)
      await new Promise<void>((resolve) => setImmediate(resolve));
  }
  pack.end();
  if (failure !== undefined) throw SandboxIacError.from(failure, { operation: OPERATION });
  if (queuedBytes > 0) yield take();
}

/**
 * Uploads `entries` (all of one user, small files) as one archive stream per
 * destination root and extracts them in the sandbox: modes as declared,
 * owner the running user, parents created, existing files replaced.
 */
export async function uploadArchive(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[],
  signal: AbortSignal | undefined,
): Promise<number> {
  const absolute = entries.filter((e) => e.remotePath.startsWith("/"));
  const relative = entries.filter((e) => !e.remotePath.startsWith("/"));
  let bytes = 0;
  for (const [group, root] of [
    [absolute, "/"],
    [relative, '"$HOME"'],
  ] as const) {
    if (group.length === 0) continue;
    await streamOne(sandbox, user, group, root, signal);
    bytes += group.reduce((n, e) => n + e.size, 0);
  }
  return bytes;
}

/**
 * Streams one archive into `tar -x` in the sandbox. `sh` rather than the
 * SDK's login shell: it starts in about a millisecond, and still reports a
 * missing `tar` as 127, which sends the files the slower way.
 */
async function streamOne(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[],
  root: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  // -p: the modes in the archive (the declared ones), not umask'd; -m: files
  // get the time of writing, as an upload gives them; --no-same-owner: the
  // running user owns them even as root. Parents come out 0755, as uploads
  // make them.
  const script = `umask 022; exec tar -x -p -m --no-same-owner -f - -C ${root}`;
  const handle = await sandbox.start("/bin/sh", {
    args: ["-c", script],
    user,
    signal,
    stdin: true,
    timeoutMs: 0,
  });
  let packFailure: unknown;
  async function* input(): AsyncGenerator<Uint8Array> {
    try {
      yield* packChunks(entries);
    } catch (err) {
      packFailure = err;
      throw err;
    }
  }
  const sent = (async () => {
    try {
      await sandbox.streamInput(handle.pid, input(), { signal });
      await sandbox.closeStdin(handle.pid, { signal });
    } catch (err) {
      // tar would wait for the rest of the archive forever.
      await sandbox.kill(handle.pid).catch(() => false);
      throw err;
    }
  })();
  const [send, end] = await Promise.allSettled([sent, handle.wait()]);
  if (packFailure !== undefined) throw SandboxIacError.from(packFailure, { operation: OPERATION });
  if (end.status === "rejected") throw end.reason;
  // A failed extraction explains why the input stopped being taken; one
  // killed because the input broke off does not.
  if (send.status === "rejected" && end.value.exitCode <= 0) throw send.reason;
  if (end.value.exitCode !== 0)
    throw commandFailed(`sh -c '${script}'`, end.value, {
      operation: OPERATION,
      sandboxID: sandbox.sandboxID,
      pid: handle.pid,
      status: end.value.status,
    });
  if (send.status === "rejected") throw send.reason;
}
