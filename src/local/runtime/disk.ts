/**
 * A sandbox's disk: a sparse ext4 image (no journal, nothing reserved) that
 * holds its writable layer, so a full disk is ENOSPC inside and nothing on
 * the host. Project quotas are unavailable on the kernels we run on; a loop
 * image costs about 9 ms to make and mount and under 1 MB when empty.
 *
 * @module
 */
import { shellWord } from "../../wire/shell-word";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { invalidArgument } from "../../errors";
import { DEFAULT_DISK_SIZE_MB, LAYER_ROOT, LAYER_USR, MIN_DISK_SIZE_MB } from "./constants";
import { execHost } from "./exec";
import { diesWithService } from "./layer-copy";
import { STAGING } from "./mounts";

/** Throws `invalid_argument` unless `sizeMB` is an accepted disk size. */
export function assertDiskSize(operation: string, sizeMB: unknown): void {
  if (typeof sizeMB !== "number" || !Number.isInteger(sizeMB) || sizeMB < MIN_DISK_SIZE_MB) {
    throw invalidArgument(
      operation,
      "diskSizeMB",
      sizeMB,
      `an integer >= ${MIN_DISK_SIZE_MB} (MiB)`,
      `leave it out for ${DEFAULT_DISK_SIZE_MB} MiB`,
    );
  }
}

/** Creates the image at `file` unless it exists; true when it was created. */
export async function ensureDisk(file: string, sizeMB: number): Promise<boolean> {
  const present = await fs.stat(file).then(
    () => true,
    () => false,
  );
  if (present) return false;
  const tmp = `${file}.tmp`;
  await fs.rm(tmp, { force: true });
  const handle = await fs.open(tmp, "w", 0o600);
  await handle.truncate(sizeMB * 1024 * 1024);
  await handle.close();
  await execHost("runtime.disk", "mkfs.ext4", [
    "-q",
    "-F",
    "-m",
    "0",
    "-O",
    "^has_journal",
    "-E",
    "lazy_itable_init=1,nodiscard",
    tmp,
  ]);
  await fs.rename(tmp, file);
  return true;
}

/** Used and total bytes of the disk mounted in the holder's namespace. */
export async function diskFigures(holderPid: number): Promise<{ used: number; total: number }> {
  const s = await fs.statfs(`/proc/${holderPid}/root${STAGING.disk}`);
  return { used: (s.blocks - s.bfree) * s.bsize, total: s.blocks * s.bsize };
}

/**
 * Copies the writable layer out of a disk into `dest/{root,usr}` (`cp -a` as
 * root: owners, modes, xattrs and whiteouts kept; they are stored as they
 * appear inside). With `holderPid` the copy reads the disk the running (and
 * frozen) sandbox has mounted; without, the image is mounted read-only in a
 * private mount namespace for the copy.
 */
export async function copyUpperOut(
  image: string,
  dest: string,
  holderPid: number | undefined,
): Promise<void> {
  const op = "runtime.captureLayer";
  // Every process of the copy dies with its parent, and the first with the service
  // (a kill -9 mid-snapshot leaves no cp writing into a layer the next start removes).
  const cp = (from: string, to: string) =>
    `${diesWithService(["cp", "-a", from, shellWord(to)]).join(" ")}`;
  const copy = (from: string) =>
    [
      cp(`${from}/upper/root`, path.join(dest, LAYER_ROOT)),
      cp(`${from}/upper/usr`, path.join(dest, LAYER_USR)),
    ].join(" && ");
  if (holderPid !== undefined) {
    const [file, ...args] = diesWithService([
      "nsenter",
      "-t",
      String(holderPid),
      "-m",
      "sh",
      "-c",
      copy(STAGING.disk),
    ]);
    await execHost(op, file, args);
    return;
  }
  const mnt = STAGING.disk;
  const [file, ...args] = diesWithService([
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    `mount -t tmpfs none ${path.dirname(mnt)} && mkdir ${mnt} && mount -o loop,ro ${shellWord(image)} ${mnt} && ${copy(mnt)}`,
  ]);
  await execHost(op, file, args);
}

/**
 * Deletes the regular files named like `namePattern` (a `find -name` glob) in
 * the writable layer of a stopped sandbox's disk image, e.g. the agent's
 * temporary upload files a crash cut off. `find` neither follows symlinks nor
 * leaves the file system, so nothing the sandbox planted reaches the host.
 */
export async function removeFilesInUpper(image: string, namePattern: string): Promise<void> {
  const mnt = STAGING.disk;
  await execHost("runtime.cleanUpper", "unshare", [
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    `mount -t tmpfs none ${path.dirname(mnt)} && mkdir ${mnt} && mount -o loop ${shellWord(image)} ${mnt} && find ${mnt}/upper -xdev -type f -name ${shellWord(namePattern)} -delete`,
  ]);
}

/**
 * Moves the writable layer of a sandbox made before disks existed
 * (`<dir>/upper/{root,usr}` on the data dir) into its new disk image, so an
 * upgrade loses nothing a user wrote. Opaque-directory marks stored as
 * `trusted.overlay.opaque` are not carried over (the overlays now read
 * `user.overlay.opaque`): such a directory shows the template's entries again.
 */
export async function migrateOldUpper(dir: string, image: string): Promise<boolean> {
  const old = path.join(dir, "upper");
  const present = await fs.stat(path.join(old, LAYER_ROOT)).then(
    () => true,
    () => false,
  );
  if (!present) return false;
  const mnt = STAGING.disk;
  await execHost("runtime.disk", "unshare", [
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    `mount -t tmpfs none ${path.dirname(mnt)} && mkdir ${mnt} && mount -o loop ${shellWord(image)} ${mnt} && mkdir -p ${mnt}/work && cp -a ${shellWord(old)} ${mnt}/upper`,
  ]);
  await fs.rm(old, { recursive: true, force: true });
  await fs.rm(path.join(dir, "work"), { recursive: true, force: true });
  await fs.rm(path.join(dir, "rootfs"), { recursive: true, force: true });
  await fs.rm(path.join(dir, "run"), { recursive: true, force: true });
  return true;
}
