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
 * 6. the Node binary and the agent bundle, bound read-only into the root.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as readline from "node:readline";
import { SandboxIacError } from "../../errors";
import { STAGING_DIR, SYSTEM_PYTHON } from "./constants";

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

const HELPER = `
import ctypes, fcntl, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
class Attr(ctypes.Structure):
    _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64), ("prop", ctypes.c_uint64), ("userns", ctypes.c_uint64)]
def ok(r, what):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return r
RO, NOSUID, NODEV, NOEXEC, IDMAP = 0x1, 0x2, 0x4, 0x8, 0x100000
def attach(src, dst, attrs, userns):
    os.mkdir(dst) if not os.path.exists(dst) else None
    fd = ok(libc.syscall(428, -100, src.encode(), 1 | 0o2000000), "open_tree " + src)
    a = Attr(attrs | (IDMAP if userns is not None else 0), 0, 0, userns or 0)
    ok(libc.syscall(442, fd, b"", 0x1000, ctypes.byref(a), ctypes.sizeof(a)), "mount_setattr " + src)
    ok(libc.syscall(429, fd, b"", -100, dst.encode(), 4), "move_mount " + dst)
    os.close(fd)
class LoopConfig(ctypes.Structure):
    _fields_ = [("fd", ctypes.c_uint32), ("block_size", ctypes.c_uint32), ("info", ctypes.c_uint8 * 232), ("reserved", ctypes.c_uint64 * 8)]
def loop_attach(image):
    # LOOP_CTL_GET_FREE, then LOOP_CONFIGURE with LO_FLAGS_AUTOCLEAR: the device detaches at unmount.
    ctl = os.open("/dev/loop-control", os.O_RDWR | os.O_CLOEXEC)
    backing = os.open(image, os.O_RDWR | os.O_CLOEXEC)
    try:
        for _ in range(8):
            n = fcntl.ioctl(ctl, 0x4C82)
            dev = "/dev/loop%d" % n
            fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
            cfg = LoopConfig(backing, 0)
            ctypes.memmove(ctypes.addressof(cfg.info) + 52, (ctypes.c_uint32 * 1)(4), 4)
            try:
                fcntl.ioctl(fd, 0x4C0A, bytes(cfg))
                return dev, fd
            except OSError as e:
                os.close(fd)
                if e.errno != 16: raise  # EBUSY: another process took it first
        raise OSError(16, "no free loop device")
    finally:
        os.close(ctl); os.close(backing)
def mount(src, dst, fstype, data, flags=NOSUID | NODEV):
    ok(libc.mount(src.encode(), dst.encode(), fstype.encode(), flags, data.encode()), "mount %s on %s" % (fstype, dst))
def build(p):
    S = p["stage"]
    userns = os.open("/proc/%d/ns/user" % p["pid"], os.O_RDONLY)
    ok(libc.setns(os.open("/proc/%d/ns/mnt" % p["pid"], os.O_RDONLY), 0x20000), "setns mnt")
    os.chdir("/")
    mount("none", S, "tmpfs", "mode=755")
    os.mkdir(S + "/disk")
    dev, devfd = loop_attach(p["image"])
    mount(dev, S + "/disk", "ext4", "")
    os.close(devfd)
    for d in ("upper", "upper/root", "upper/usr", "work", "work/root", "work/usr"):
        if not os.path.isdir(S + "/disk/" + d): os.mkdir(S + "/disk/" + d, 0o755)
    attach(S + "/disk", S + "/rw", NOSUID | NODEV, userns)
    roots, usrs = [], []
    for i, (r, u) in enumerate(p["layers"] + ([[None, "/usr"]] if p["hostUsr"] else [])):
        if r is not None:
            attach(r, "%s/r%d" % (S, i), RO | NOSUID | NODEV, userns); roots.append("%s/r%d" % (S, i))
        attach(u, "%s/u%d" % (S, i), RO | NOSUID | NODEV, userns); usrs.append("%s/u%d" % (S, i))
    os.mkdir(S + "/root")
    os.mkdir(S + "/devpts")
    pid = os.fork()
    if pid == 0:
        try:
            ok(libc.setns(userns, 0x10000000), "setns user")
            os.setgroups([]); os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
            W = S + "/rw"
            mount("overlay", S + "/root", "overlay", "userxattr,lowerdir=%s,upperdir=%s/upper/root,workdir=%s/work/root" % (":".join(roots), W, W))
            mount("overlay", S + "/root/usr", "overlay", "userxattr,lowerdir=%s,upperdir=%s/upper/usr,workdir=%s/work/usr" % (":".join(usrs), W, W))
            # Owned by the user namespace, so its PTYs count against its own max=, within the host's non-reserved ones.
            mount("devpts", S + "/devpts", "devpts", "newinstance,ptmxmode=0666,mode=620,gid=5,max=%d" % p["ptysMax"], NOSUID | NOEXEC)
            # Volume mount points are made here, as root of the user namespace (host root is not mapped in it).
            for _, dst in p.get("volumes") or []:
                cur = S + "/root"
                for part in dst.strip("/").split("/"):
                    cur += "/" + part
                    # The root's content may come from a sandbox (a snapshot): never follow its symlinks.
                    if os.path.islink(cur): raise OSError(40, "volume mount path %s goes through a symlink in the template" % dst)
                    if not os.path.isdir(cur): os.mkdir(cur, 0o755)
            os._exit(0)
        except BaseException as e:
            os.write(ERRFD, str(e).encode()[:4000]); os._exit(1)
    if os.waitpid(pid, 0)[1] != 0: raise OSError(0, "mounting the overlays in the user namespace failed")
    for src, dst in p["binds"]:
        attach(src, S + "/root" + dst, RO | NOSUID | NODEV, None)
    for src, dst in p.get("volumes") or []:
        cur = S + "/root"
        for part in dst.strip("/").split("/"):
            cur += "/" + part
            if os.path.islink(cur) or not os.path.isdir(cur): raise OSError(40, "volume mount path %s is not a directory of the sandbox" % dst)
        attach(src, cur, NOSUID | NODEV, userns)


ERRFD = 2
def serve():
    global ERRFD
    for line in sys.stdin:
        req = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            ERRFD = w
            try:
                build(req)
                os._exit(0)
            except BaseException as e:
                os.write(w, str(e).encode()[:4000])
                os._exit(1)
        os.close(w)
        err = b""
        while True:
            chunk = os.read(r, 4096)
            if not chunk: break
            err += chunk
        os.close(r)
        st = os.waitpid(pid, 0)[1]
        msg = None if st == 0 else (err.decode(errors="replace") or "status %d" % st)
        sys.stdout.write(json.dumps({"id": req["id"], "error": msg}) + "\\n")
        sys.stdout.flush()
serve()
`;

/** One long-lived helper process per runtime (forking per request: `import ctypes` alone costs tens of ms). */
export class MountHelper {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();

  private ensure(): ChildProcess {
    if (this.child && this.child.exitCode === null && !this.child.killed) return this.child;
    // -I -S: no site packages or user paths, the standard library is enough (and starts faster).
    const child = spawn(SYSTEM_PYTHON, ["-I", "-S", "-c", HELPER], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const answer = JSON.parse(line) as { id: number; error: string | null };
      const p = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (answer.error === null) p?.resolve();
      else p?.reject(mountError(answer.error));
    });
    child.on("exit", () => {
      for (const p of this.pending.values())
        p.reject(mountError(`the mount helper exited: ${stderr.trim() || "no output"}`));
      this.pending.clear();
    });
    child.stdin.on("error", () => undefined);
    this.child = child;
    return child;
  }

  /** Builds the sandbox's root in its holder's mount namespace; rejects with what failed. */
  mount(plan: MountPlan): Promise<void> {
    const child = this.ensure();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.stdin?.write(
        `${JSON.stringify({
          id,
          pid: plan.holderPid,
          stage: STAGING_DIR,
          image: plan.image,
          layers: plan.layers,
          hostUsr: plan.hostUsr,
          binds: plan.binds,
          volumes: plan.volumes ?? [],
          ptysMax: plan.ptysMax,
        })}\n`,
      );
    });
  }

  /** Stops the helper (it also stops on its own when the service's end of its stdin closes). */
  close(): void {
    this.child?.stdin?.end();
    this.child?.kill("SIGKILL");
  }
}

function mountError(detail: string): SandboxIacError {
  return new SandboxIacError(
    "internal",
    `mounting the sandbox's root filesystem failed: ${detail.trim().slice(-2000)}`,
    { operation: "runtime.start" },
  );
}
