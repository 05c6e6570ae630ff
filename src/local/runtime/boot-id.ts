/**
 * A boot id per sandbox boot. Inside, `/proc/sys/kernel/random/boot_id` would
 * otherwise be the host kernel's, the same across every start and resume; E2B
 * sandboxes are VMs, so a cold boot (a start, or a resume after a
 * filesystem-only pause) shows a new one. A thaw keeps the running processes
 * and so the id they saw.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs/promises";
import { STAGING_DIR } from "./constants";

/** Where the kernel shows its boot id. */
const BOOT_ID_IN_SANDBOX = "/proc/sys/kernel/random/boot_id";

/** Where, in the holder's mount namespace (see mounts.ts), the boot id file is staged. */
const BOOT_ID_STAGED = `${STAGING_DIR}/boot_id`;

/**
 * Writes a fresh boot id into the staging tmpfs of the holder's mount
 * namespace (root-owned, invisible inside the sandbox once bubblewrap has
 * pivoted), readable by the unprivileged bubblewrap that binds it.
 */
export async function writeBootId(holderPid: number): Promise<void> {
  const file = `/proc/${holderPid}/root${BOOT_ID_STAGED}`;
  await fs.writeFile(file, `${randomUUID()}\n`, { mode: 0o444 });
}

/** The bwrap arguments that show the staged boot id; they must follow `--proc`. */
export function bootIdArgs(): string[] {
  return ["--ro-bind", BOOT_ID_STAGED, BOOT_ID_IN_SANDBOX];
}
