/**
 * Where the Provisioner's `files` inputs point: each source checked (a
 * regular file or a directory, else a failure that names it) and listed into
 * the files and directories below it, each with its place in the sandbox. Its
 * own file because the listing is the filesystem walk alone: the hashing of
 * what it lists is `hashed-entries.ts`, the manifest that joins both is
 * `manifest.ts`.
 *
 * @module
 */
import { promises as fs, readdirSync, statSync, type Stats } from "node:fs";
import * as path from "node:path";
import * as posix from "node:path/posix";
import { SandboxIacError } from "../../errors";
import type { ManifestDir } from "./manifest-entry";
import type { FileSpec } from "./provisioner.args";

/** Directories listed between two turns of the event loop. */
const WALK_SLICE_DIRS = 32;

/** A listed file, not yet hashed: where it is, where it goes and whose it is. */
export interface Pending {
  localPath: string;
  remotePath: string;
  user?: string | undefined;
}

function missingSource(spec: FileSpec, local: string, cause: unknown): SandboxIacError {
  return new SandboxIacError(
    "invalid_argument",
    `files source ${JSON.stringify(spec.source)} does not exist (resolved to ${local}): fix the path or create the file`,
    { operation: "provisioner.files", field: "files.source", resourceId: spec.source, cause },
  );
}

/** The stat of a spec's source, which must be a regular file or a directory. */
async function sourceStat(spec: FileSpec, root: string): Promise<{ local: string; stat: Stats }> {
  const local = path.resolve(root, spec.source);
  let stat;
  try {
    stat = await fs.stat(local);
  } catch (cause) {
    throw missingSource(spec, local, cause);
  }
  if (!stat.isFile() && !stat.isDirectory()) {
    throw new SandboxIacError(
      "invalid_argument",
      `files source ${JSON.stringify(spec.source)} is neither a file nor a directory: name a regular file or a directory`,
      { operation: "provisioner.files", field: "files.source", resourceId: spec.source },
    );
  }
  return { local, stat };
}

/**
 * Fails as {@link buildManifest} would on a source that is missing or
 * neither a file nor a directory, without listing anything: a run checks
 * this before it opens a sandbox, then lists while the sandbox is opened.
 */
export async function checkSources(specs: readonly FileSpec[], root: string): Promise<void> {
  for (const spec of specs) await sourceStat(spec, root);
}

/**
 * Lists a spec's files (without stat: sizes and modes come from the hashing
 * pass) and its directories (with their modes). Symlinks are followed.
 */
export async function walk(
  spec: FileSpec,
  root: string,
  out: Pending[],
  dirs: ManifestDir[],
): Promise<void> {
  const { local, stat } = await sourceStat(spec, root);
  if (stat.isFile()) {
    out.push({ localPath: local, remotePath: spec.destination, user: spec.user });
    return;
  }
  dirs.push({ remotePath: spec.destination, mode: stat.mode & 0o7777, user: spec.user });
  const stack: Array<{ local: string; remote: string }> = [{ local, remote: spec.destination }];
  let listed = 0;
  while (stack.length > 0) {
    const { local: dir, remote } = stack.pop()!;
    // Synchronous, a slice of directories between two turns of the event
    // loop: awaited one by one, each readdir and stat was a trip through the
    // thread pool, and the listing of 10,000 files in 100 directories spent
    // about 25 ms of its 120 ms waiting for them (bench/provisioner.js).
    if (++listed % WALK_SLICE_DIRS === 0) await new Promise<void>((r) => setImmediate(r));
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // Children's paths by concatenation, not `join` (which normalises the
    // whole path again, twice per file): below the spec's own directory a
    // parent is already a joined path and a listed name is one plain
    // component (no slash, never "." or ".."), so the result is the same.
    const top = dir === local;
    const localPrefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
    const remotePrefix = top ? "" : remote + "/";
    for (const entry of entries) {
      const childLocal = localPrefix + entry.name;
      const childRemote = top ? posix.join(remote, entry.name) : remotePrefix + entry.name;
      if (entry.isFile()) {
        out.push({ localPath: childLocal, remotePath: childRemote, user: spec.user });
        continue;
      }
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      // Directories need their mode; a symlink needs a stat to tell what it points at.
      const st = statSync(childLocal);
      if (st.isDirectory()) {
        dirs.push({ remotePath: childRemote, mode: st.mode & 0o7777, user: spec.user });
        stack.push({ local: childLocal, remote: childRemote });
      } else if (st.isFile()) {
        out.push({ localPath: childLocal, remotePath: childRemote, user: spec.user });
      }
    }
  }
}
