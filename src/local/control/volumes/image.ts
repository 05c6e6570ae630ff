/**
 * A volume's own file system: a sparse ext4 image beside its record, loop
 * mounted on the host at the volume's `data/` (`nosuid,nodev`), so a volume
 * is full at its size (ENOSPC inside sandboxes, 507 in the content API) and
 * the host disk loses at most that much. Sandboxes bind the mounted `data/`
 * as before. Project quotas are unavailable on the kernels we run on (see
 * runtime/disk.ts).
 *
 * Volumes made before images (a plain `data/` directory, no `sizeMB` in
 * their record) keep working as they are, without a limit.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { describeValue } from "../../../errors";
import { execHost } from "../../runtime/exec";
import { unescapeMountPath } from "../../runtime/stale-mounts";
import { serviceError } from "../http";
import { SANDBOX_USER_IDS } from "./owner";

/** The size of a volume when `POST /volumes` names none. */
const DEFAULT_VOLUME_SIZE_MB = 4096;
/** The smallest volume: ext4 with its journal needs a few MiB for itself. */
const MIN_VOLUME_SIZE_MB = 16;
/** The largest volume: 16 TiB, ext4's limit with 4 KiB blocks. */
const MAX_VOLUME_SIZE_MB = 16 * 1024 * 1024;

const OPERATION = "control.volumes";

/** The checked `sizeMB` of a create body (`undefined` for the default). */
export function volumeSizeOf(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_VOLUME_SIZE_MB;
  if (
    typeof raw !== "number" ||
    !Number.isInteger(raw) ||
    raw < MIN_VOLUME_SIZE_MB ||
    raw > MAX_VOLUME_SIZE_MB
  )
    throw serviceError(
      "invalid_argument",
      `body.sizeMB must be an integer from ${MIN_VOLUME_SIZE_MB} to ${MAX_VOLUME_SIZE_MB} (MiB), got ${describeValue(raw)}: leave it out for ${DEFAULT_VOLUME_SIZE_MB} MiB`,
    );
  return raw;
}

/**
 * Makes the sparse ext4 image `image` of `sizeMB` MiB, its root owned by the
 * sandbox's `user` (a mounted volume is writable by the default user). With a
 * journal, unlike sandbox disks: a volume's content is meant to last.
 */
export async function makeVolumeImage(image: string, sizeMB: number): Promise<void> {
  const handle = await fs.open(image, "wx", 0o600);
  try {
    await handle.truncate(sizeMB * 1024 * 1024);
  } finally {
    await handle.close();
  }
  await execHost(OPERATION, "mkfs.ext4", [
    "-q",
    "-F",
    "-m",
    "0",
    "-E",
    `lazy_itable_init=1,lazy_journal_init=1,nodiscard,root_owner=${SANDBOX_USER_IDS.uid}:${SANDBOX_USER_IDS.gid}`,
    image,
  ]);
}

/** Loop-mounts `image` at `mountPoint` (`nosuid,nodev`), unless something is mounted there already. */
export async function mountVolumeImage(image: string, mountPoint: string): Promise<void> {
  if (await isMountPoint(mountPoint)) return;
  await execHost(OPERATION, "mount", ["-t", "ext4", "-o", "loop,nosuid,nodev", image, mountPoint]);
}

/**
 * Lazily unmounts `mountPoint`; the loop device goes once no process holds a
 * descriptor into the volume any more. A no-op when nothing is mounted there.
 */
export async function unmountVolume(mountPoint: string): Promise<void> {
  if (!(await isMountPoint(mountPoint))) return;
  await execHost(OPERATION, "umount", ["-l", mountPoint]);
}

/**
 * Makes `dir` (the volumes directory) a shared mount of its own (a bind onto
 * itself), unless it is one already. Volumes are mounted under it, and every
 * sandbox's namespace holder starts as a slave of the host's mounts
 * (runtime/holder.ts), so its copies of the volumes' mounts are slaves of
 * these: a volume unmounted here is unmounted in every holder, and its loop
 * device goes with the last use.
 */
export async function shareVolumesDir(dir: string): Promise<void> {
  if (!(await isMountPoint(dir))) await execHost(OPERATION, "mount", ["--bind", dir, dir]);
  // Private first: a bind of a shared host mount would join the host's peer group.
  await execHost(OPERATION, "mount", ["--make-private", dir]);
  await execHost(OPERATION, "mount", ["--make-shared", dir]);
}

/** Whether `p` is a mount point of this mount namespace. */
async function isMountPoint(p: string): Promise<boolean> {
  const text = await fs.readFile("/proc/self/mountinfo", "utf8");
  return text.split("\n").some((line) => unescapeMountPath(line.split(" ")[4] ?? "") === p);
}
