/**
 * What the service's stop does to its sandboxes: their processes stop, their
 * layers stay, and they come back paused on the next start.
 *
 * @module
 */
import { lockedEntry, type KnownSandbox } from "./known-sandbox";
import { appendLog } from "./logs";
import { stopProcesses } from "./pause-resume";

/** Stops the processes of every sandbox in `sandboxes`, recording the running ones as paused now. */
export async function stopForShutdown(
  sandboxes: Iterable<KnownSandbox>,
  log: (line: string) => void,
): Promise<void> {
  const now = new Date().toISOString();
  // Sequential on purpose: each stop unmounts and kills a cgroup; the number of sandboxes is unbounded.
  for (const sandbox of sandboxes) {
    await lockedEntry(sandbox, async () => {
      await stopProcesses(sandbox);
      if (sandbox.record.state === "running") {
        sandbox.record.state = "paused";
        sandbox.record.endAt = now;
        appendLog(sandbox.record, "info", "sandbox paused: the service stopped", {});
      }
    }).catch((err: unknown) =>
      log(`stopping sandbox ${sandbox.record.sandboxID} failed: ${String(err)}`),
    );
  }
}
