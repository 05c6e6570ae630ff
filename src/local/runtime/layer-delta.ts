/**
 * Incremental captures of a running sandbox's writable layer: what changed
 * since the previous capture of the same sandbox, as a layer that stacks on
 * the previous ones. Template builds use it to make one layer per step
 * without restarting the build sandbox between steps.
 *
 * Each capture walks the upper (the sandbox frozen) and records every
 * entry's inode and ctime in a manifest next to the sandbox's disk. The next
 * capture copies the entries whose inode or ctime changed (ctime cannot be
 * set from user space, so any change of content or metadata shows) and turns
 * entries that disappeared into whiteouts (0/0 character devices). A
 * directory keeps `user.overlay.opaque` only when it became opaque since the
 * previous capture or was replaced (a new inode): a directory that was
 * already opaque must not hide the layers captured since.
 *
 * Everything under the upper is the sandbox's: the walk never follows a
 * symlink, files are opened with `O_NOFOLLOW`, and nothing is created in the
 * new layer below a path that is not a real directory of that layer.
 *
 * @module
 */
import { SYSTEM_PYTHON } from "./constants";
import { execHost } from "./exec";
import { diesWithService } from "./layer-copy";

const DELTA = `
import json, os, stat, sys
upper, dest, manifest_path = sys.argv[1], sys.argv[2], sys.argv[3]
OPQ = "user.overlay.opaque"
try:
    with open(manifest_path) as f: prev = json.load(f)
except FileNotFoundError:
    prev = None
real_dest = os.path.realpath(dest)
def opaque(p):
    try: return os.getxattr(p, OPQ, follow_symlinks=False) == b"y"
    except OSError: return False
cur, src_of = {}, {}
for part in ("root", "usr"):
    base = os.path.join(upper, part)
    for d, dirs, files in os.walk(base):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            rel = part + "/" + os.path.relpath(p, base)
            cur[rel] = [st.st_ino, st.st_ctime_ns, 1 if stat.S_ISDIR(st.st_mode) else 0, 1 if stat.S_ISDIR(st.st_mode) and opaque(p) else 0]
            src_of[rel] = p
def safe_parent(target):
    parent = os.path.dirname(target)
    if os.path.realpath(parent) != os.path.normpath(os.path.join(real_dest, os.path.relpath(parent, dest))):
        raise OSError("refusing to write below a non-directory: " + target)
def attrs(src, dst, st, keep_opaque):
    os.chown(dst, st.st_uid, st.st_gid, follow_symlinks=False)
    if not stat.S_ISLNK(st.st_mode): os.chmod(dst, stat.S_IMODE(st.st_mode))
    if not stat.S_ISLNK(st.st_mode):
        for name in os.listxattr(src, follow_symlinks=False):
            if name == OPQ and not keep_opaque: continue
            try: os.setxattr(dst, name, os.getxattr(src, name, follow_symlinks=False), follow_symlinks=False)
            except OSError: pass
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
def container(rel):
    # A directory of the new layer standing for an unchanged one: its attributes, never its opacity.
    target = os.path.join(dest, rel)
    if os.path.lexists(target): return
    up = os.path.dirname(rel)
    if "/" in up: container(up)
    safe_parent(target)
    src = src_of.get(rel) or os.path.join(upper, rel)
    st = os.lstat(src)
    if not stat.S_ISDIR(st.st_mode): raise OSError("not a directory: " + rel)
    os.mkdir(target)
    attrs(src, target, st, False)
def copy(rel, keep_opaque):
    src, target = src_of[rel], os.path.join(dest, rel)
    container(os.path.dirname(rel))
    safe_parent(target)
    st = os.lstat(src)
    m = st.st_mode
    if stat.S_ISDIR(m):
        if not os.path.lexists(target): os.mkdir(target)
    elif stat.S_ISREG(m):
        fi = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
        fo = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while os.sendfile(fo, fi, None, 1 << 30) > 0: pass
        finally:
            os.close(fi); os.close(fo)
    elif stat.S_ISLNK(m): os.symlink(os.readlink(src), target)
    elif stat.S_ISCHR(m) or stat.S_ISBLK(m): os.mknod(target, m, st.st_rdev)
    elif stat.S_ISFIFO(m): os.mkfifo(target, stat.S_IMODE(m))
    else: return
    attrs(src, target, st, keep_opaque)
for part in ("root", "usr"):
    os.mkdir(os.path.join(dest, part))
    attrs(os.path.join(upper, part), os.path.join(dest, part), os.lstat(os.path.join(upper, part)), False)
for rel in sorted(cur):
    c, p = cur[rel], (prev or {}).get(rel)
    if p is not None and p[0] == c[0] and p[1] == c[1]: continue
    # Opaque in the new layer only when it became opaque now, or the directory was replaced.
    copy(rel, c[3] == 1 and (p is None or p[0] != c[0] or p[3] == 0))
def gone_under_non_dir(rel):
    up = os.path.dirname(rel)
    while "/" in up:
        if up not in cur or cur[up][2] == 0: return True
        up = os.path.dirname(up)
    return False
for rel in sorted(prev or {}):
    if rel in cur or gone_under_non_dir(rel): continue
    container(os.path.dirname(rel))
    target = os.path.join(dest, rel)
    safe_parent(target)
    if not os.path.lexists(target):
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))
tmp = manifest_path + ".tmp"
with open(tmp, "w") as f: json.dump(cur, f)
os.replace(tmp, manifest_path)
`;

/**
 * Copies what changed in the upper at `upper` (`{root,usr}`, as the frozen
 * sandbox's holder sees it) since the capture that wrote `manifest` (all of
 * it without one) into `dest/{root,usr}`, then rewrites `manifest`. Runs as
 * root in the mount namespace of `holderPid`.
 */
export async function copyUpperDelta(
  holderPid: number,
  upper: string,
  dest: string,
  manifest: string,
): Promise<void> {
  const [file, ...args] = diesWithService([
    "nsenter",
    "-t",
    String(holderPid),
    "-m",
    SYSTEM_PYTHON,
    "-I",
    "-S",
    "-c",
    DELTA,
    upper,
    dest,
    manifest,
  ]);
  await execHost("runtime.captureLayer", file, args);
}
