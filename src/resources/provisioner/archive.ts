/**
 * Many small files as one tar archive: written by the maintained `tar`
 * package as a stream (never held in memory) into a local temporary file,
 * uploaded as one file, and extracted in the sandbox by `tar` run as the
 * owning user. It needs only `/files` and a process, so it works against
 * E2B's cloud as it does against the local service; a request per file (or
 * per multipart batch) costs the sandbox far more than one extraction.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import * as posix from "node:path/posix";
import { once } from "node:events";
import { PackSync, type WriteEntry } from "tar";
import type { SandboxClient } from "../../client/sandbox";
import { SandboxIacError } from "../../errors";
import type { ManifestEntry } from "./manifest";

/**
 * Above this many small files of one user, they go up as one archive. Below
 * it a few multipart batches cost less than writing, uploading and
 * extracting an archive.
 */
export const ARCHIVE_MIN_FILES = 200;
/**
 * Many small files go up in at most this many archives, pipelined: one is
 * extracted while the next is packed and sent (see {@link ArchiveLanes}).
 */
export const ARCHIVE_MAX_PARTS = 8;
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

/** Runs the functions given to it one after the other, in the order given. */
type OneAtATime = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * The lanes archives of one sync share: packing (local CPU) one at a time,
 * and extraction one at a time (extractions side by side measured several
 * times slower each, contending on the sandbox's filesystem). Uploads run
 * freely, so archive n+1 is packed and sent while archive n extracts.
 */
export interface ArchiveLanes {
  pack: OneAtATime;
  extract: OneAtATime;
}

/** New lanes for one sync. */
export function archiveLanes(): ArchiveLanes {
  return { pack: oneAtATime(), extract: oneAtATime() };
}

/** A new {@link OneAtATime} lane. */
function oneAtATime(): OneAtATime {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
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
 * {@link ARCHIVE_MAX_FILE_BYTES}) that the uploads and extractions running
 * beside the packing are never held up for long.
 */
const PACK_SLICE_FILES = 64;

/**
 * Writes `entries` into a tar file at `file`, named by their remote paths
 * (relative to `/` or to the home directory) and carrying their local modes.
 *
 * Packed with the `tar` package's synchronous packer, a slice of members at
 * a time with a turn of the event loop between slices: its asynchronous
 * packer makes four trips through libuv's thread pool per member (stat,
 * open, read, close) and took about three times the CPU for a tree of small
 * files (bench/provisioner.js; 10,000 files of 1-8 KiB), which on a loaded
 * machine was most of an upload's time.
 */
async function writeArchive(file: string, entries: readonly ManifestEntry[]): Promise<void> {
  // Members are written in the order they are added; one name per local file, in order.
  const names = new Map<string, string[]>();
  for (const e of entries) {
    const list = names.get(e.localPath) ?? [];
    list.push(posix.normalize(e.remotePath).replace(/^\/+/, ""));
    names.set(e.localPath, list);
  }
  const out = createWriteStream(file, { highWaterMark: PACK_OUT_HIGH_WATER_MARK });
  let failure: unknown;
  // The stream closes after an error too: its error is kept, never thrown unheard.
  const written = once(out, "close").then(
    () => undefined,
    (err: unknown) => void (failure ??= err),
  );
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
  let full = false;
  pack.on("data", (chunk: Buffer) => {
    if (!out.write(chunk)) full = true;
  });
  try {
    for (let i = 0; i < entries.length && failure === undefined; i++) {
      // A file gone or unreadable since the manifest throws here.
      pack.add(entries[i].localPath);
      if ((i + 1) % PACK_SLICE_FILES !== 0) continue;
      if (full) {
        full = false;
        await Promise.race([once(out, "drain"), written]);
      } else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (failure === undefined) pack.end();
  } catch (err) {
    failure ??= err;
  }
  out.end();
  await written;
  if (failure !== undefined)
    throw SandboxIacError.from(failure, { operation: "provisioner.files" });
}

/** Buffer of the local archive file's stream: one write per MiB, not per member. */
const PACK_OUT_HIGH_WATER_MARK = 1 << 20;

/**
 * Uploads `entries` (all of one user, small files) as one archive per
 * destination root and extracts them in the sandbox: modes as declared,
 * owner the running user, parents created, existing files replaced.
 */
export async function uploadArchive(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[],
  signal: AbortSignal | undefined,
  lanes: ArchiveLanes = archiveLanes(),
): Promise<number> {
  const absolute = entries.filter((e) => e.remotePath.startsWith("/"));
  const relative = entries.filter((e) => !e.remotePath.startsWith("/"));
  let bytes = 0;
  for (const [group, root] of [
    [absolute, "/"],
    [relative, "~"],
  ] as const) {
    if (group.length === 0) continue;
    bytes += await uploadOne(sandbox, user, group, root, signal, lanes);
  }
  return bytes;
}

async function uploadOne(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[],
  root: "/" | "~",
  signal: AbortSignal | undefined,
  lanes: ArchiveLanes,
): Promise<number> {
  const tag = randomBytes(8).toString("hex");
  const local = path.join(tmpdir(), `sandbox-iac-${tag}.tar`);
  // Relative to the user's home, as every upload path is; the tar file leaves no trace there.
  const remote = `.sandbox-iac-${tag}.tar`;
  try {
    await lanes.pack(() => writeArchive(local, entries));
    await sandbox.uploadFile(local, remote, { user, signal });
  } finally {
    await fs.rm(local, { force: true });
  }
  // -p: the modes in the archive (the declared ones), not umask'd; -m: files
  // get the time of writing, as an upload gives them; --no-same-owner: the
  // running user owns them even as root. Parents come out 0755, as uploads
  // make them.
  const dir = root === "/" ? "/" : '"$HOME"';
  await lanes.extract(() =>
    sandbox.run(
      `umask 022; tar -x -p -m --no-same-owner -f "$HOME"/${remote} -C ${dir}; s=$?; rm -f "$HOME"/${remote}; exit $s`,
      { user, signal, timeoutMs: 0 },
    ),
  );
  return entries.reduce((n, e) => n + e.size, 0);
}
