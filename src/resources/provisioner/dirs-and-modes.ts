/**
 * The directories and modes of a sync, set by shell commands in the sandbox:
 * which declared directories no upload creates, `mkdir -p` for those as
 * their users, and one `chmod` per mode for files and directories whose
 * declared mode is not the one an upload gives. Its own file because these
 * are the sync's commands, apart from its uploads (`sync.ts`).
 *
 * @module
 */
import * as posix from "node:path/posix";
import { shellWord } from "../../wire/shell-word";
import type { SandboxClient } from "../../client/sandbox";
import type { ManifestDir, ManifestEntry } from "./manifest-entry";

/**
 * What these commands take of a sync's options (`SyncOptions` in `sync.ts`,
 * which imports this file): the signal that stops them.
 */
interface CommandOptions {
  signal?: AbortSignal | undefined;
}

/** Paths per chmod or mkdir invocation, well under the argument-length limit. */
const CHMOD_BATCH = 200;

/** The directories that no file of `files` (uploaded as the same user) lies under. */
export function dirsWithoutUploads(
  dirs: readonly ManifestDir[],
  files: readonly ManifestEntry[],
): ManifestDir[] {
  const covered = new Set<string>();
  // Files come listed directory by directory: one whose raw parent and user
  // are the last file's, and whose name is a plain one, covers the same
  // directories, so the normalising and the walk up are skipped for it.
  let lastParent: string | undefined;
  let lastUser: string | undefined;
  for (const file of files) {
    const user = file.user ?? "";
    const slash = file.remotePath.lastIndexOf("/");
    const parent = file.remotePath.slice(0, slash + 1);
    const name = file.remotePath.slice(slash + 1);
    const plain = name !== "" && name !== "." && name !== "..";
    if (plain && parent === lastParent && user === lastUser) continue;
    lastParent = plain ? parent : undefined;
    lastUser = user;
    for (let dir = posix.dirname(posix.normalize(file.remotePath)); ; dir = posix.dirname(dir)) {
      const key = `${user}\0${dir}`;
      if (covered.has(key)) break;
      covered.add(key);
      if (dir === posix.dirname(dir)) break;
    }
  }
  return dirs.filter((d) => !covered.has(`${d.user ?? ""}\0${posix.normalize(d.remotePath)}`));
}

/**
 * Creates directories: one `mkdir -p` per user and batch of paths, run as
 * that user in its home (where relative paths start), so every directory and
 * missing parent is owned by its declared user and made in the listed order,
 * parents first; existing ones are left as they are. Modes come after.
 */
export async function makeDirs(
  sandbox: SandboxClient,
  dirs: readonly ManifestDir[],
  options: CommandOptions,
): Promise<void> {
  const byUser = new Map<string, { user: string | undefined; paths: string[] }>();
  for (const dir of dirs) {
    const key = dir.user ?? "";
    const group = byUser.get(key) ?? { user: dir.user, paths: [] };
    group.paths.push(dir.remotePath);
    byUser.set(key, group);
  }
  for (const group of byUser.values()) {
    for (let i = 0; i < group.paths.length; i += CHMOD_BATCH) {
      const batch = group.paths.slice(i, i + CHMOD_BATCH);
      await sandbox.run(`cd && umask 022 && mkdir -p -- ${batch.map(shellWord).join(" ")}`, {
        user: group.user,
        signal: options.signal,
      });
    }
  }
}

/** Sets the declared modes, one chmod per mode and batch, as the owning user. */
export async function applyModes(
  sandbox: SandboxClient,
  files: readonly ManifestEntry[],
  dirs: readonly ManifestDir[],
  options: CommandOptions,
): Promise<void> {
  const groups = new Map<string, { user: string | undefined; mode: number; paths: string[] }>();
  for (const item of [...files, ...dirs]) {
    // Uploads land 0644 and directories 0755: only differing modes need a chmod.
    const isDir = !("sha256" in item);
    if (item.mode === (isDir ? 0o755 : 0o644)) continue;
    const key = `${item.user ?? ""}:${item.mode}`;
    const group = groups.get(key) ?? { user: item.user, mode: item.mode, paths: [] };
    group.paths.push(item.remotePath);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    for (let i = 0; i < group.paths.length; i += CHMOD_BATCH) {
      const batch = group.paths.slice(i, i + CHMOD_BATCH);
      await sandbox.run(`chmod ${group.mode.toString(8)} ${batch.map(shellWord).join(" ")}`, {
        user: group.user,
        signal: options.signal,
      });
    }
  }
}
