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

/** Starts the holder as host uid `idBase` and maps inside 0..65535 onto `idBase`... */
export async function startHolder(idBase: number, sandboxID: string): Promise<Holder> {
  // The spawner's child makes the namespaces before its exec (host-holder.ts), so they exist once
  // it is reported started. It dies with the spawner, which dies with the service (even on kill -9),
  // so nothing outlives it: the signal is set again after its uid change, which clears it.
  const child = await spawnHost("runtime.start", "sleep", ["infinity"], {
    holder: { sandboxID, idBase },
  });
  child.stdout.resume();
  child.stderr.resume();
  const exited = child.exited.then(() => undefined);
  const map = `0 ${idBase} ${SANDBOX_ID_RANGE}\n`;
  try {
    await fs.writeFile(`/proc/${child.pid}/uid_map`, map);
    await fs.writeFile(`/proc/${child.pid}/gid_map`, map);
  } catch (err) {
    child.kill("SIGKILL");
    throw new SandboxIacError(
      "internal",
      `writing the sandbox's id maps failed (${SandboxIacError.from(err, { operation: "runtime.idMaps" }).reason})`,
      { operation: "runtime.start", resourceId: sandboxID },
    );
  }
  return { pid: child.pid, exited, kill: () => child.kill("SIGKILL") };
}
