/**
 * Notices that the process that started the provider is gone. Terraform
 * killed with SIGKILL (or crashed) never sends `GRPCController.Shutdown`, and
 * go-plugin gives a plugin no other sign: a provider left alone kept running,
 * holding its socket, its memory and whatever it was doing, until the
 * machine restarted. When its parent dies a process is given to another
 * (init, or a subreaper), so its parent pid changes; polling that works on
 * Linux and macOS alike, where Linux's parent-death signal is not something
 * a Node process can set.
 *
 * @module
 */

/** How often the parent pid is read, in ms: a provider outlives a killed Terraform by at most this. */
const PARENT_POLL_MS = 1_000;

/**
 * Calls `onGone` with the parent's pid once this process's parent has
 * changed (it died). The poll never keeps the process alive; the returned
 * function stops it.
 */
export function watchParent(
  onGone: (parentPid: number) => void,
  intervalMs: number = PARENT_POLL_MS,
): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
