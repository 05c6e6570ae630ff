/**
 * Whether a process exists, for the owner pids the runtime records in its
 * lock files (slots, host networks).
 *
 * @module
 */

/** True while process `pid` exists: signal 0 reaches it, or it is another user's (EPERM). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
