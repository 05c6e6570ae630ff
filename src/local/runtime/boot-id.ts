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
import * as path from "node:path";

/** Where the kernel shows its boot id. */
export const BOOT_ID_IN_SANDBOX = "/proc/sys/kernel/random/boot_id";

/** Writes a fresh boot id next to the sandbox's state (never inside it) and returns the file. */
export async function writeBootId(sandboxDir: string): Promise<string> {
  const file = path.join(sandboxDir, "boot_id");
  await fs.rm(file, { force: true });
  await fs.writeFile(file, `${randomUUID()}\n`, { mode: 0o444 });
  return file;
}

/** The bwrap arguments that show `file` as the boot id; they must follow `--proc`. */
export function bootIdArgs(file: string | undefined): string[] {
  return file ? ["--ro-bind", file, BOOT_ID_IN_SANDBOX] : [];
}
