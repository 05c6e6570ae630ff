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
 * 5. the Node binary and the agent bundle, bound read-only into the root.
 *
 * @module
 */
import { execFile } from "node:child_process";
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
  /** `[host path, path inside]` read-only binds added last. */
  binds: ReadonlyArray<readonly [string, string]>;
}

/** Where, inside the holder's mount namespace, things end up. */
export const STAGING = {
  /** The loop-mounted disk image (not idmapped). */
  disk: `${STAGING_DIR}/disk`,
  /** The merged root handed to bubblewrap. */
  root: `${STAGING_DIR}/root`,
} as const;

const HELPER = `
import ctypes, json, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
class Attr(ctypes.Structure):
    _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64), ("prop", ctypes.c_uint64), ("userns", ctypes.c_uint64)]
def ok(r, what):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return r
RO, NOSUID, NODEV, IDMAP = 0x1, 0x2, 0x4, 0x100000
def attach(src, dst, attrs, userns):
    os.mkdir(dst) if not os.path.exists(dst) else None
    fd = ok(libc.syscall(428, -100, src.encode(), 1 | 0o2000000), "open_tree " + src)
    a = Attr(attrs | (IDMAP if userns is not None else 0), 0, 0, userns or 0)
    ok(libc.syscall(442, fd, b"", 0x1000, ctypes.byref(a), ctypes.sizeof(a)), "mount_setattr " + src)
    ok(libc.syscall(429, fd, b"", -100, dst.encode(), 4), "move_mount " + dst)
    os.close(fd)
def mount(src, dst, fstype, data):
    ok(libc.mount(src.encode(), dst.encode(), fstype.encode(), NOSUID | NODEV, data.encode()), "mount %s on %s" % (fstype, dst))
p = json.loads(sys.argv[1])
S = p["stage"]
userns = os.open("/proc/%d/ns/user" % p["pid"], os.O_RDONLY)
ok(libc.setns(os.open("/proc/%d/ns/mnt" % p["pid"], os.O_RDONLY), 0x20000), "setns mnt")
os.chdir("/")
mount("none", S, "tmpfs", "mode=755")
os.mkdir(S + "/disk")
subprocess.run(["mount", "-o", "loop,nodev,nosuid", p["image"], S + "/disk"], check=True)
for d in ("upper", "upper/root", "upper/usr", "work", "work/root", "work/usr"):
    if not os.path.isdir(S + "/disk/" + d): os.mkdir(S + "/disk/" + d, 0o755)
attach(S + "/disk", S + "/rw", NOSUID | NODEV, userns)
roots, usrs = [], []
for i, (r, u) in enumerate(p["layers"] + [[None, "/usr"]]):
    if r is not None:
        attach(r, "%s/r%d" % (S, i), RO | NOSUID | NODEV, userns); roots.append("%s/r%d" % (S, i))
    attach(u, "%s/u%d" % (S, i), RO | NOSUID | NODEV, userns); usrs.append("%s/u%d" % (S, i))
os.mkdir(S + "/root")
pid = os.fork()
if pid == 0:
    try:
        ok(libc.setns(userns, 0x10000000), "setns user")
        os.setgroups([]); os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
        W = S + "/rw"
        mount("overlay", S + "/root", "overlay", "userxattr,lowerdir=%s,upperdir=%s/upper/root,workdir=%s/work/root" % (":".join(roots), W, W))
        mount("overlay", S + "/root/usr", "overlay", "userxattr,lowerdir=%s,upperdir=%s/upper/usr,workdir=%s/work/usr" % (":".join(usrs), W, W))
        os._exit(0)
    except BaseException as e:
        sys.stderr.write("%s\\n" % e); sys.stderr.flush(); os._exit(1)
if os.waitpid(pid, 0)[1] != 0: sys.exit(1)
for src, dst in p["binds"]:
    attach(src, S + "/root" + dst, RO | NOSUID | NODEV, None)
`;

/** Runs the helper; rejects with its stderr when a step fails. */
export function mountSandboxRoot(plan: MountPlan): Promise<void> {
  const arg = JSON.stringify({
    pid: plan.holderPid,
    stage: STAGING_DIR,
    image: plan.image,
    layers: plan.layers,
    binds: plan.binds,
  });
  return new Promise((resolve, reject) => {
    // -I -S: no site packages or user paths, the standard library is enough (and starts faster).
    execFile(SYSTEM_PYTHON, ["-I", "-S", "-c", HELPER, arg], (err, _out, stderr) => {
      if (!err) return resolve();
      reject(
        new SandboxIacError(
          "internal",
          `mounting the sandbox's root filesystem failed: ${String(stderr).trim().slice(-2000) || err.message}`,
          { operation: "runtime.start", cause: err },
        ),
      );
    });
  });
}
