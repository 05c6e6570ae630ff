/**
 * The holder: a `sleep` that owns a sandbox's user, mount and network
 * namespaces. It is created **as the sandbox's host uid**, not as root, so
 * per-user kernel limits (inotify instances and watches, user namespaces,
 * keys) are charged to that uid and no sandbox can exhaust another's. Root
 * then writes its id maps (inside 0..65535 onto the slot's range), which needs
 * neither `/etc/subuid` nor the `uidmap` package. Killing the holder tears
 * everything down: mounts, the loop device, the network namespace and veth.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import { SandboxIacError } from "../../errors";
import { SANDBOX_ID_RANGE } from "./constants";
import { spawnHost } from "./host-spawner";

/** A started holder. */
export interface Holder {
  pid: number;
  /** Resolves when the holder has exited. */
  exited: Promise<void>;
  kill(): void;
}

const NS_WAIT_MS = 5_000;

/** Starts the holder as host uid `idBase` and maps inside 0..65535 onto `idBase`... */
export async function startHolder(idBase: number, sandboxID: string): Promise<Holder> {
  const child = await spawnHost("runtime.start", "setpriv", [
    // The holder dies with its parent, the host spawner, which dies with the service (even on
    // kill -9), so nothing outlives it; set again after the uid change, which clears it.
    "--pdeathsig",
    "KILL",
    `--reuid=${idBase}`,
    `--regid=${idBase}`,
    "--clear-groups",
    "--",
    "unshare",
    "--user",
    "--mount",
    "--net",
    // Not unshare's default (private): the host's unmount of a deleted volume must reach the
    // copy of its mount this namespace took, or the volume's loop device outlives its deletion.
    "--propagation",
    "slave",
    "--",
    "sleep",
    "infinity",
  ]);
  let stderr = "";
  child.stdout.resume();
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = child.exited.then(() => undefined);
  let gone = false;
  void exited.then(() => (gone = true));
  const pid = child.pid;
  const fail = (why: string): never => {
    child.kill("SIGKILL");
    throw new SandboxIacError("internal", `${why}${stderr ? `: ${stderr.trim()}` : ""}`, {
      operation: "runtime.start",
      resourceId: sandboxID,
    });
  };
  const ours = await fs.readlink("/proc/self/ns/net");
  const deadline = Date.now() + NS_WAIT_MS;
  // unshare(2) runs after exec; until then the holder still shares our namespaces.
  for (;;) {
    const theirs = await fs.readlink(`/proc/${pid}/ns/net`).catch(() => ours);
    if (theirs !== ours) break;
    if (gone) return fail("the namespace holder exited before creating its namespaces");
    if (Date.now() > deadline) return fail("the namespace holder did not create its namespaces");
    await new Promise((r) => setTimeout(r, 1));
  }
  const map = `0 ${idBase} ${SANDBOX_ID_RANGE}\n`;
  try {
    await fs.writeFile(`/proc/${pid}/uid_map`, map);
    await fs.writeFile(`/proc/${pid}/gid_map`, map);
  } catch (err) {
    return fail(
      `writing the sandbox's id maps failed (${SandboxIacError.from(err, { operation: "runtime.idMaps" }).reason})`,
    );
  }
  return { pid, exited, kill: () => child.kill("SIGKILL") };
}
