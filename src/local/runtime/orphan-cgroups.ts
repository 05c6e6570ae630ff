/**
 * Removing the empty sandbox cgroups of services that are gone. A service
 * removes its sandboxes' cgroups as they stop, and at its start those its
 * data dir's earlier service left (`CgroupDriver.removeStale`, by the
 * data dir's prefix); a service killed for good (kill -9 of a test run on a
 * temporary data dir) leaves them for ever: 257 empty cgroups per
 * controller had piled up on one test machine.
 *
 * @module
 */
import type { CgroupDriver } from "./cgroups";
import { sandboxesOfLiveClaims } from "./slots";

/** A sandbox cgroup's name: the 10 hex digits of its data dir, `-`, its sandbox id. */
const SANDBOX_CGROUP = /^[0-9a-f]{10}-(.+)$/;

/**
 * Removes every empty sandbox cgroup whose service is dead, whichever its
 * data dir; returns how many. A cgroup's service is dead when no live
 * process holds a slot claim for its sandbox: a sandbox claims its slot
 * (owner file `pid sandboxID`) before its cgroup is made and gives it back
 * only after the cgroup is removed, so a live service's cgroup, even empty
 * (made, its sandbox not yet in), always has its claim. The cgroups are
 * listed before the claims are read, so a cgroup made after the listing is
 * not looked at, and one made before it has its claim on disk already.
 * Never kills: a cgroup still holding processes stays (rmdir refuses it).
 */
export async function removeOrphanCgroups(cgroups: CgroupDriver): Promise<number> {
  const names = await cgroups.list();
  const live = await sandboxesOfLiveClaims();
  let removed = 0;
  for (const name of names) {
    const sandboxID = SANDBOX_CGROUP.exec(name)?.[1];
    if (sandboxID === undefined || live.has(sandboxID)) continue;
    if (await cgroups.removeIfEmpty(name)) removed++;
  }
  return removed;
}
