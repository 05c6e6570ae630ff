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
import ctypes, fcntl, json, os, re, sys
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
    mnt = mount_id_of(fd)
    os.close(fd)
    return mnt
def mount_id_of(fd):
    with open("/proc/self/fdinfo/%d" % fd) as f:
        for line in f:
            if line.startswith("mnt_id:"): return int(line.split()[1])
    raise OSError(0, "no mnt_id in fdinfo")
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
    ok(libc.mount(src.encode(), dst.encode(), fstype.encode() or None, flags, data.encode() or None), "mount %s on %s" % (fstype or "propagation", dst))
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
            # Volume mount points, and those of read-only binds a template predates (the egress CA's
            # directory), are made here, as root of the user namespace (host root is not mapped in it).
            for _, dst in (p.get("volumes") or []) + [b for b in p["binds"] if not os.path.lexists(S + "/root" + b[1])]:
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
    ids = []
    for src, dst in p.get("volumes") or []:
        cur = S + "/root"
        for part in dst.strip("/").split("/"):
            cur += "/" + part
            if os.path.islink(cur) or not os.path.isdir(cur): raise OSError(40, "volume mount path %s is not a directory of the sandbox" % dst)
        ids.append(attach(src, cur, NOSUID | NODEV, userns))
    # MS_REC|MS_SHARED: bubblewrap makes its copies slaves, so an unmount here reaches the sandbox.
    mount("none", S + "/root", "", "", MS_REC | MS_SHARED)
    return {"volumeMountIds": ids}
MS_REC, MS_SHARED, MNT_DETACH = 0x4000, 0x100000, 2
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS = 0x02, 0x04
def unescape(p):
    return re.sub(r"\\\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p)
def detach(p):
    want = p["mountId"]
    ok(libc.setns(os.open("/proc/%d/ns/mnt" % p["pid"], os.O_RDONLY), 0x20000), "setns mnt")
    os.chdir("/")
    # The mount point's path is the sandbox's to change (it may rename a parent, or put a symlink
    # where the path was): the path is only a hint, opened without following any symlink, and the
    # mount is unmounted through that descriptor only if it is the very mount we made (its id).
    for _ in range(100):
        point = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split(" ")
                if int(fields[0]) == want: point = unescape(fields[4]); break
        if point is None: return {"detached": False}
        how = OpenHow(os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
        fd = libc.syscall(437, -100, point.encode(), ctypes.byref(how), ctypes.sizeof(how))
        if fd < 0: continue  # moved between the read and the open: read again
        try:
            if mount_id_of(fd) != want: continue
            os.fchdir(fd)
            ok(libc.umount2(b".", MNT_DETACH), "umount " + point)
            os.chdir("/")
            return {"detached": True}
        finally:
            os.close(fd)
    raise OSError(11, "the volume's mount point kept moving")


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
                result = (detach if req.get("op") == "detach" else build)(req)
                os.write(w, json.dumps(result).encode())
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
        result = json.loads(err.decode()) if st == 0 else None
        sys.stdout.write(json.dumps({"id": req["id"], "error": msg, "result": result}) + "\\n")
        sys.stdout.flush()
serve()
`;

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
    const child = spawn(SYSTEM_PYTHON, ["-I", "-S", "-c", HELPER], {
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
