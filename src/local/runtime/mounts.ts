/**
 * Builds a sandbox's root filesystem inside its holder's mount namespace.
 *
 * Node has no binding for the new mount API, and util-linux 2.38's
 * `X-mount.idmap` is silently ignored, so a short Python program (standard
 * library `ctypes` over `open_tree` / `mount_setattr` / `move_mount`) does it,
 * as root, in one process:
 * 1. a tmpfs over {@link STAGING_DIR}, private to the namespace;
 * 2. the sandbox's ext4 disk image, loop-mounted (`nodev,nosuid`);
 * 3. every template layer, the host `/usr` and the disk, cloned as idmapped
 *    mounts for the sandbox's user namespace (layers read-only): files stored
 *    as 0 or 1000 on the host appear as 0 or 1000 inside, and the sandbox's
 *    writes are stored canonically, so its upper can become a layer as is;
 * 4. the two overlays (`/` and `/usr`), mounted from inside the user
 *    namespace (`userxattr`): an idmapped upper is refused under an overlay
 *    mounted by host root;
 * 5. the sandbox's own devpts instance (`max=` its PTY limit), mounted from
 *    inside the user namespace too and bound at `/dev/pts` by bubblewrap:
 *    PTYs come from a per-sandbox pool, not the host's;
 * 6. the Node binary and the agent bundle, bound read-only into the root;
 * 7. the root's tree made shared, so that bubblewrap's view of it (which it
 *    makes a slave) loses a volume when the holder's namespace does: that is
 *    how {@link MountHelper.detach} takes a deleted volume away from a
 *    running sandbox (see there).
 *
 * The program itself is mount-helper-source.ts; this file holds what a
 * mount is asked with, where things end up, and {@link MountHelper}, the
 * service's end of the helper process.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as readline from "node:readline";
import { SandboxIacError } from "../../errors";
import { STAGING_DIR, SYSTEM_PYTHON } from "./constants";
import { MOUNT_HELPER_SOURCE } from "./mount-helper-source";

/** What {@link mountSandboxRoot} mounts. */
export interface MountPlan {
  /** Pid of the holder owning the user and mount namespaces. */
  holderPid: number;
  /** The sandbox's ext4 disk image. */
  image: string;
  /** `[root, usr]` host directories of each layer, highest first. */
  layers: ReadonlyArray<readonly [string, string]>;
  /** True when the host's `/usr` is the lowest `/usr` layer (stacks on the built-in `base`). */
  hostUsr: boolean;
  /** `[host path, path inside]` read-only binds added last. */
  binds: ReadonlyArray<readonly [string, string]>;
  /**
   * `[host path, path inside]` read-write volume binds, idmapped like the
   * layers (host 1000 is 1000 inside), so one volume is shared by sandboxes
   * with different host uid ranges.
   * @default []
   */
  volumes?: ReadonlyArray<readonly [string, string]>;
  /** PTYs the sandbox may open at once (its devpts instance's `max=`). */
  ptysMax: number;
}

/** Where, inside the holder's mount namespace, things end up. */
export const STAGING = {
  /** The loop-mounted disk image (not idmapped). */
  disk: `${STAGING_DIR}/disk`,
  /** The merged root handed to bubblewrap. */
  root: `${STAGING_DIR}/root`,
  /** The sandbox's devpts instance, bound at `/dev/pts`. */
  devpts: `${STAGING_DIR}/devpts`,
} as const;

/** What {@link MountHelper.mount} made that the runtime needs later. */
export interface MountedRoot {
  /** Mount ids, in the holder's namespace, of the volume binds (in the order of `plan.volumes`). */
  volumeMountIds: number[];
}

type Answer = { id: number; error: string | null; result: unknown };

/** One long-lived helper process per runtime (forking per request: `import ctypes` alone costs tens of ms). */
export class MountHelper {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (result: unknown) => void; reject: (detail: string) => void }
  >();

  private ensure(): ChildProcess {
    if (this.child && this.child.exitCode === null && !this.child.killed) return this.child;
    // -I -S: no site packages or user paths, the standard library is enough (and starts faster).
    const child = spawn(SYSTEM_PYTHON, ["-I", "-S", "-c", MOUNT_HELPER_SOURCE], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const answer = JSON.parse(line) as Answer;
      const p = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.error === null) p?.resolve(answer.result);
      else p?.reject(answer.error);
    });
    child.on("exit", () => {
      for (const p of this.pending.values())
        p.reject(`the mount helper exited: ${stderr.trim() || "no output"}`);
      this.pending.clear();
    });
    child.stdin.on("error", () => undefined);
    this.child = child;
    return child;
  }

  private request(body: Record<string, unknown>): Promise<unknown> {
    const child = this.ensure();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.stdin?.write(`${JSON.stringify({ ...body, id })}\n`);
    });
  }

  /** Builds the sandbox's root in its holder's mount namespace; rejects with what failed. */
  async mount(plan: MountPlan): Promise<MountedRoot> {
    try {
      return (await this.request({
        pid: plan.holderPid,
        stage: STAGING_DIR,
        image: plan.image,
        layers: plan.layers,
        hostUsr: plan.hostUsr,
        binds: plan.binds,
        volumes: plan.volumes ?? [],
        ptysMax: plan.ptysMax,
      })) as MountedRoot;
    } catch (detail) {
      throw helperError("runtime.start", "mounting the sandbox's root filesystem", detail);
    }
  }

  /**
   * Unmounts (lazily) the volume bind `mountId` of the holder `holderPid`'s
   * namespace, and with it the sandbox's own view of it (a slave of it, see
   * step 7 above); false when it was not mounted any more.
   *
   * The mount is found by its id, never by a path: its mount point lies in
   * the sandbox's root, which the sandbox can rename or replace by a symlink
   * (to a host path, as the holder's namespace sees the host's tree). The
   * helper reads the mount point's current path from mountinfo, opens it
   * without following any symlink, and unmounts through that descriptor only
   * if it is the mount with that id; otherwise it reads again. So whatever
   * the sandbox does, nothing but that one mount can be unmounted.
   */
  async detach(holderPid: number, mountId: number): Promise<boolean> {
    try {
      const r = (await this.request({ op: "detach", pid: holderPid, mountId })) as {
        detached: boolean;
      };
      return r.detached;
    } catch (detail) {
      throw helperError("runtime.detachVolume", "detaching a volume from a sandbox", detail);
    }
  }

  /** Stops the helper (it also stops on its own when the service's end of its stdin closes). */
  close(): void {
    this.child?.stdin?.end();
    this.child?.kill("SIGKILL");
  }
}

function helperError(operation: string, what: string, detail: unknown): SandboxIacError {
  return new SandboxIacError("internal", `${what} failed: ${String(detail).trim().slice(-2000)}`, {
    operation,
  });
}
