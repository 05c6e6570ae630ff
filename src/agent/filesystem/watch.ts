/**
 * Directory watching on top of `fs.watch` (inotify), mapped to envd's event
 * types as closely as inotify allows through Node: a name that appears is
 * CREATE, one that vanishes is REMOVE, a content change is WRITE, and a change
 * that leaves size and mtime alone is CHMOD.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { EventType, type EntryInfo } from "../../gen/envd/filesystem/filesystem_pb";
import { SandboxIacError } from "../../errors";
import { entryInfo } from "../entry-info";
import { isAgentTempName, recentReplace } from "./replaced-files";

/** One filesystem event, `name` relative to the watched directory. */
export interface WatchEvent {
  name: string;
  type: EventType;
  entry?: EntryInfo | undefined;
}

/** What to watch. */
export interface WatchOptions {
  dir: string;
  recursive: boolean;
  includeEntry: boolean;
  onEvent(event: WatchEvent): void;
  onError(err: Error): void;
}

const NETWORK_FS = /^(nfs4?|cifs|smb3?|smbfs|fuse(\..*)?|fuseblk)$/;

/** True when `dir` lives on an NFS, CIFS, SMB or FUSE mount. */
export function isNetworkMount(dir: string): boolean {
  let best = "";
  let bestType = "";
  let mounts = "";
  try {
    mounts = fs.readFileSync("/proc/self/mounts", "utf8");
  } catch {
    return false;
  }
  for (const line of mounts.split("\n")) {
    const [, mnt, type] = line.split(" ");
    if (!mnt || !type) continue;
    const point = mnt.replace(/\\040/g, " ");
    const inside = dir === point || dir.startsWith(point.endsWith("/") ? point : `${point}/`);
    if (inside && point.length >= best.length) {
      best = point;
      bestType = type;
    }
  }
  return NETWORK_FS.test(bestType);
}

/** Starts watching; returns the function that stops it. */
export function watchDir(opts: WatchOptions): () => void {
  // What each name looked like at the last event, to tell WRITE from CHMOD
  // and CREATE from an existing name being replaced.
  const seen = new Map<string, { size: number; mtimeMs: number; mode: number; ino: number }>();
  primeSeen(opts.dir, seen);
  let closed = false;
  // A name that vanished while its inode may reappear under another name: a
  // rename. inotify reports the two halves back to back, but fs.watch does
  // not pair them, so the vanished name waits briefly for its partner.
  let vanished: { name: string; ino: number; timer: NodeJS.Timeout } | undefined;
  // Names whose removal was reported (or is waiting in `vanished`) and that
  // have not been seen since: inotify may add events for the same removal (a
  // late change, the unlink's attribute change, the delete itself), and envd
  // reports one REMOVE. Insertion-ordered, so the oldest go first when full.
  const gone = new Set<string>();
  const markGone = (name: string) => {
    gone.add(name);
    if (gone.size > GONE_MAX_NAMES) gone.delete(gone.values().next().value as string);
  };
  const send = (event: WatchEvent) => {
    if (!closed) opts.onEvent(event);
  };
  const settleVanished = (type: EventType) => {
    if (!vanished) return;
    clearTimeout(vanished.timer);
    send({ name: vanished.name, type });
    vanished = undefined;
  };
  const emit = async (name: string, fsType: "rename" | "change") => {
    const abs = path.join(opts.dir, name);
    let st: fs.Stats | undefined;
    try {
      st = await fs.promises.lstat(abs);
    } catch {
      st = undefined;
    }
    if (closed) return;
    const before = seen.get(name);
    let type: EventType;
    if (!st) {
      // A change of a name that is gone adds nothing (its removal comes as a
      // rename event), nor does a second event for a removal already reported.
      if (fsType === "change" || gone.has(name)) return;
      markGone(name);
      seen.delete(name);
      if (before) {
        settleVanished(EventType.REMOVE);
        const timer = setTimeout(() => settleVanished(EventType.REMOVE), RENAME_PAIR_MS);
        vanished = { name, ino: before.ino, timer };
        return;
      }
      type = EventType.REMOVE;
    } else {
      gone.delete(name);
      const now = { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode, ino: st.ino };
      seen.set(name, now);
      // envd (fsnotify) reports RENAME on the old name, CREATE on the new one.
      if (fsType === "rename" && vanished?.ino === st.ino) settleVanished(EventType.RENAME);
      if (fsType === "rename") type = EventType.CREATE;
      else if (
        before &&
        before.size === now.size &&
        before.mtimeMs === now.mtimeMs &&
        before.mode !== now.mode
      ) {
        type = EventType.CHMOD;
      } else type = EventType.WRITE;
    }
    // An upload or compose renamed into place is a write of this name.
    const replace = st && fsType === "rename" ? recentReplace(abs) : undefined;
    const types = !replace
      ? [type]
      : replace.created
        ? [EventType.CREATE, EventType.WRITE]
        : [EventType.WRITE];
    const entry =
      opts.includeEntry && st && type !== EventType.REMOVE
        ? await entryInfo(abs).catch(() => undefined)
        : undefined;
    for (const t of types) {
      const event: WatchEvent = { name, type: t };
      if (entry) event.entry = entry;
      send(event);
    }
  };
  // Events of one name are processed in arrival order.
  let chain = Promise.resolve();
  const watcher = fs.watch(opts.dir, { recursive: opts.recursive }, (fsType, filename) => {
    if (!filename) return;
    const name = filename.toString();
    if (isAgentTempName(name)) return;
    chain = chain
      .then(() => emit(name, fsType))
      .catch((err: unknown) =>
        opts.onError(
          err instanceof Error ? err : SandboxIacError.from(err, { operation: "watch" }),
        ),
      );
  });
  watcher.on("error", (err) => {
    if (!closed) opts.onError(err);
  });
  return () => {
    closed = true;
    if (vanished) clearTimeout(vanished.timer);
    watcher.close();
  };
}

/** How long a vanished name waits for its inode to reappear (a rename) before it counts as removed. */
const RENAME_PAIR_MS = 50;

/** Most removed names remembered to drop repeated events of one removal. */
const GONE_MAX_NAMES = 10_000;

/** Most entries whose inodes are recorded when a watch starts. */
const PRIME_MAX_ENTRIES = 10_000;

/**
 * Records the watched directory's entries as they are, so that a rename of a
 * file that has not changed since the watch began is still recognised.
 */
function primeSeen(
  dir: string,
  seen: Map<string, { size: number; mtimeMs: number; mode: number; ino: number }>,
): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir).slice(0, PRIME_MAX_ENTRIES);
  } catch {
    return;
  }
  for (const name of names) {
    try {
      const st = fs.lstatSync(path.join(dir, name));
      seen.set(name, { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode, ino: st.ino });
    } catch {
      // gone meanwhile
    }
  }
}
