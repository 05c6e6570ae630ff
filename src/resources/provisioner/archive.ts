/**
 * Many small files as one tar stream (packed by `archive-pack.ts`) straight
 * into the stdin of `tar -x` running in the sandbox as the owning
 * user (the process API's `StreamInput`). Nothing is written to a temporary
 * file on either side, and the sandbox extracts while the archive is still
 * being packed and sent. It needs only the process API, so it works against
 * E2B's cloud as it does against the local service; a request per file (or
 * per multipart batch) costs the sandbox far more than one extraction.
 *
 * @module
 */
import type { ProcessHandle, SandboxClient } from "../../client/sandbox";
import { commandFailed } from "../../client/sandbox/errors";
import { SandboxIacError } from "../../errors";
import { packChunks } from "./archive-pack";
import type { DeferredHashes } from "./deferred-hashes";
import type { ManifestEntry } from "./manifest-entry";
import { normalRemotePath } from "./remote-path";

/**
 * Above this many small files of one user, they go up as one archive. Below
 * it a few multipart batches cost less than starting an extraction.
 */
export const ARCHIVE_MIN_FILES = 200;
/** Larger files go up on their own stream: an archive would copy their bytes once more. */
export const ARCHIVE_MAX_FILE_BYTES = 1024 * 1024;

/** A `..` path component. */
const DOTDOT_COMPONENT = /(?:^|\/)\.\.(?:\/|$)/;

/**
 * True when `remotePath` can be an archive member: no `..` component (tar
 * refuses those) and not a bare root or home directory.
 */
export function isArchivable(remotePath: string): boolean {
  const normal = normalRemotePath(remotePath);
  // A test, not a split: this runs once per file of the tree (10,000 arrays to collect otherwise).
  if (DOTDOT_COMPONENT.test(normal)) return false;
  return normal !== "/" && normal !== "." && !normal.endsWith("/");
}

/** The operation named by the errors of an archive upload. */
const OPERATION = "provisioner.files";

/**
 * Uploads `entries` (all of one user, small files) as one archive stream per
 * destination root and extracts them in the sandbox: modes as declared,
 * owner the running user, parents created, existing files replaced.
 * Hashes still `deferred` are taken from the bytes packed.
 */
export async function uploadArchive(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[],
  signal: AbortSignal | undefined,
  deferred?: DeferredHashes,
): Promise<number> {
  const absolute = entries.filter((e) => e.remotePath.startsWith("/"));
  const relative = entries.filter((e) => !e.remotePath.startsWith("/"));
  let bytes = 0;
  for (const [group, root] of [
    [absolute, "/"],
    [relative, '"$HOME"'],
  ] as const) {
    if (group.length === 0) continue;
    await streamOne(
      sandbox,
      user,
      group,
      root,
      signal,
      deferred && ((e, c) => deferred.fromContent(e, c)),
    );
    bytes += group.reduce((n, e) => n + e.size, 0);
  }
  return bytes;
}

/**
 * Bytes the pipe into `tar` holds, set by `tar`'s own process before it
 * starts: the most an unprivileged process may ask for (Linux's default
 * `fs.pipe-max-size`). A pipe holds 64 KiB by default, which `tar` empties in
 * about a quarter of a millisecond: it then waited on the agent's next write
 * after every 64 KiB. The same archive sent into `tar` took a median 338 ms
 * through a 64 KiB pipe and 275 ms through a 1 MiB one (6 runs each,
 * alternated; `tar -x` of it from a file: about 200 ms).
 */
const TAR_PIPE_BYTES = 1 << 20;

/**
 * The start of the command that runs `tar` with its stdin pipe grown to
 * {@link TAR_PIPE_BYTES}: Linux's `F_SETPIPE_SZ` (1031), which no shell can
 * set, through `perl` when the sandbox has it (Debian's essential perl-base:
 * ours and E2B's images). A refusal (the pipe budget of the sandbox's user
 * spent) leaves the pipe as it was. Without `perl` the shell goes on to `tar`
 * alone (the `||` after it); a missing `tar` still exits 127.
 */
const STDIN_PIPE_GROWN =
  `command -v perl >/dev/null 2>&1 && exec perl -e ` +
  `'fcntl(STDIN, 1031, ${TAR_PIPE_BYTES}); exec { $ARGV[0] } @ARGV; exit 127' --`;

/** Where an archive's members are extracted: `/`, or the home directory. */
export type ArchiveRoot = "/" | '"$HOME"';

/** A `tar -x` started in the sandbox, waiting for its archive on stdin. */
export interface Extraction {
  readonly handle: ProcessHandle;
  /** The shell script it runs, as its errors name it. */
  readonly script: string;
}

/**
 * Starts `tar -x` in the sandbox as `user`, extracting under `root` what
 * its stdin will carry (`streamInto`). `sh` rather than the SDK's login
 * shell: it starts in about a millisecond, and still reports a missing
 * `tar` as 127, which sends the files the slower way.
 */
export async function startExtraction(
  sandbox: SandboxClient,
  user: string | undefined,
  root: ArchiveRoot,
): Promise<Extraction> {
  // -p: the modes in the archive (the declared ones), not umask'd; -m: files
  // get the time of writing, as an upload gives them; --no-same-owner: the
  // running user owns them even as root. Parents come out 0755, as uploads
  // make them.
  const tar = `tar -x -p -m --no-same-owner -f - -C ${root}`;
  const script = `umask 022; ${STDIN_PIPE_GROWN} ${tar} || exec ${tar}`;
  // Started without the stop's signal (core/stop.ts: a call that creates
  // something is let finish): stopped before its answer, `tar` would wait on
  // its stdin forever under a pid never learned. A stop then fails the input
  // (`streamInto`), which kills it.
  const handle = await sandbox.start("/bin/sh", {
    args: ["-c", script],
    user,
    stdin: true,
    timeoutMs: 0,
  });
  return { handle, script };
}

/**
 * Streams one archive of `entries` (a list, or batches still being listed)
 * into `tar -x` in the sandbox, extracted under `root`; `onContent` sees
 * each file's bytes as they are packed (`packChunks`).
 */
async function streamOne(
  sandbox: SandboxClient,
  user: string | undefined,
  entries: readonly ManifestEntry[] | AsyncIterable<readonly ManifestEntry[]>,
  root: ArchiveRoot,
  signal: AbortSignal | undefined,
  onContent: ((entry: ManifestEntry, content: Uint8Array) => void) | undefined,
): Promise<void> {
  const extraction = await startExtraction(sandbox, user, root);
  await streamInto(sandbox, extraction, entries, signal, onContent);
}

/**
 * Streams the archive of `entries` into a started `extraction`, and waits
 * for it: its stdin closed once the archive ends, and `tar` killed when the
 * archive cannot be sent whole (a file gone, a stop, the connection lost).
 * Throws `tar`'s failure as a command failure (127: no `tar` in the sandbox).
 */
export async function streamInto(
  sandbox: SandboxClient,
  extraction: Extraction,
  entries: readonly ManifestEntry[] | AsyncIterable<readonly ManifestEntry[]>,
  signal: AbortSignal | undefined,
  onContent: ((entry: ManifestEntry, content: Uint8Array) => void) | undefined,
): Promise<void> {
  const { handle, script } = extraction;
  let packFailure: unknown;
  async function* input(): AsyncGenerator<Uint8Array> {
    try {
      yield* packChunks(entries, onContent);
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
