/**
 * The sandboxes' seccomp filter: generated once per data dir by libseccomp
 * (Debian's `python3-seccomp`) and handed to bubblewrap as a file descriptor
 * (`bwrap --seccomp FD`). No BPF is written by hand here: the script below
 * only lists rules, libseccomp compiles and checks them.
 *
 * An allow-list with the semantics of Docker's default profile for a
 * container with Docker's default capabilities (lists in seccomp-allowed.ts and seccomp-refused.ts):
 * - the calls Docker allows work, `clone` only without namespace flags,
 *   `personality` only with the values Docker allows, `socket` for every
 *   family but AF_VSOCK (EAFNOSUPPORT);
 * - everything else answers EPERM, as under Docker, so a program sees what it
 *   would see in a Docker container;
 * - except calls newer than the lists (numbered after the newest one they
 *   name) and the few of {@link ENOSYS_SYSCALLS}, which answer ENOSYS: a libc
 *   probing a call the filter does not know falls back to the older call, as
 *   it would on an older kernel (EPERM there broke containers when glibc took
 *   up `faccessat2` and `clone3`; runc answers ENOSYS for the same reason);
 * - syscalls of other ABIs (i386, x32) kill the process.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { SYSTEM_PYTHON } from "./constants";
import {
  AF_VSOCK,
  ALLOWED_SYSCALLS,
  CLONE_NAMESPACE_MASK,
  PERSONALITY_VALUES,
} from "./seccomp-allowed";
import { ENOSYS_SYSCALLS, REFUSED_SYSCALLS, UNIFIED_SYSCALL_NUMBERS } from "./seccomp-refused";

/** Syscall numbers past the newest named one answered ENOSYS, up to this bound (exclusive). */
const NEWER_SYSCALLS_END = 512;

const GENERATOR = `
import errno, json, sys, seccomp
p = json.load(sys.stdin)
f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL)
# A binary tree of syscall numbers: the allow-list is long.
f.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
numbers = []
def nr(name):
    n = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
    if n < 0 and p["unifiedOk"]: n = p["unified"].get(name, -1)
    return n  # negative: not a syscall of this architecture
def add(action, name, *args):
    n = nr(name)
    if n < 0: return
    numbers.append(n)
    # The default already answers EPERM (libseccomp refuses a rule repeating the default).
    if action is not None: f.add_rule(action, n, *args)
for name in p["allow"]: add(seccomp.ALLOW, name)
for name in p["refuse"]: add(None, name)
for name in p["enosys"]: add(seccomp.ERRNO(errno.ENOSYS), name)
add(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, p["cloneMask"], 0))
for v in p["personality"]: add(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, v))
add(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.NE, p["vsock"]))
add(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, p["vsock"]))
for n in range(max(numbers) + 1, p["newerEnd"]):
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), n)
with open(sys.argv[1], "wb") as out:
    f.export_bpf(out)
`;

/**
 * Path of the compiled filter under `dataDir`, generating it when missing.
 * The file name carries a hash of the rules, so a changed list is compiled anew.
 */
export async function ensureSeccompFilter(dataDir: string): Promise<string> {
  const policy = JSON.stringify({
    allow: ALLOWED_SYSCALLS,
    refuse: REFUSED_SYSCALLS,
    enosys: ENOSYS_SYSCALLS,
    cloneMask: CLONE_NAMESPACE_MASK,
    personality: PERSONALITY_VALUES,
    vsock: AF_VSOCK,
    unified: UNIFIED_SYSCALL_NUMBERS,
    // alpha and mips number their syscalls apart; every other architecture shares 424 and up.
    unifiedOk: process.arch === "x64" || process.arch === "arm64",
    newerEnd: NEWER_SYSCALLS_END,
  });
  const hash = createHash("sha256")
    .update(GENERATOR)
    .update(policy)
    .update(process.arch)
    .digest("hex")
    .slice(0, 16);
  const file = path.join(dataDir, `seccomp-${hash}.bpf`);
  const present = await fs.stat(file).then(
    (s) => s.size > 0,
    () => false,
  );
  if (present) return file;
  const tmp = `${file}.tmp-${process.pid}`;
  await new Promise<void>((resolve, reject) => {
    const child = execFile(SYSTEM_PYTHON, ["-I", "-c", GENERATOR, tmp], (err, _out, stderr) => {
      if (!err) return resolve();
      reject(
        new SandboxIacError(
          "unsupported",
          `compiling the sandboxes' seccomp filter with libseccomp failed: ${String(stderr).trim() || err.message}; install Debian's python3-seccomp (apt-get install python3-seccomp)`,
          { operation: "runtime.seccomp", cause: err },
        ),
      );
    });
    child.stdin?.end(policy);
  });
  await fs.rename(tmp, file);
  return file;
}
