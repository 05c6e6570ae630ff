/**
 * What the service's stop does to its sandboxes: their processes stop, their
 * layers stay, and they come back paused on the next start.
 *
 * @module
 */
import { lockedEntry, type Live } from "./known-sandbox";
import { appendLog } from "./logs";
import { stopProcesses } from "./pause-resume";

/** Stops the processes of every sandbox in `lives`, recording the running ones as paused now. */
export async function stopForShutdown(
  lives: Iterable<Live>,
  log: (line: string) => void,
): Promise<void> {
  const now = new Date().toISOString();
  // Sequential on purpose: each stop unmounts and kills a cgroup; the number of sandboxes is unbounded.
  for (const l of lives) {
    await lockedEntry(l, async () => {
      await stopProcesses(l);
      if (l.record.state === "running") {
        l.record.state = "paused";
        l.record.endAt = now;
        appendLog(l.record, "info", "sandbox paused: the service stopped", {});
      }
    }).catch((err: unknown) =>
      log(`stopping sandbox ${l.record.sandboxID} failed: ${String(err)}`),
    );
  }
}
