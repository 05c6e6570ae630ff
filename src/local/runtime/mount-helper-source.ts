/**
 * The mount helper's program: Python (standard library `ctypes` over
 * `open_tree`, `mount_setattr`, `move_mount`, `openat2` and the loop device
 * ioctls), run as root by {@link MountHelper} in one long-lived process.
 * Each request is one JSON line on its stdin and is served in a child of its
 * own (`build`: a sandbox's root, steps 1 to 7 of mounts.ts; `detach`: one
 * volume bind, by mount id); the answer is one JSON line `{id, error,
 * result}` on its stdout.
 *
 * Its own file because it is a program of its own, in another language, and
 * the part that acts as root on paths a sandbox controls: its checks (no
 * symlink followed on a volume's mount path, a bind found by mount id, never
 * by path) are read and reviewed here, apart from the service's side of it.
 *
 * @module
 */

/** The helper's source, given to the system Python with `-I -S -c`. */
export const MOUNT_HELPER_SOURCE = `
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
