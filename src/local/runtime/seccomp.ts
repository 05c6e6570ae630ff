/**
 * The sandboxes' seccomp filter: generated once per data dir by libseccomp
 * (Debian's `python3-seccomp`) and handed to bubblewrap as a file descriptor
 * (`bwrap --seccomp FD`). No BPF is written by hand here: the script below
 * only lists rules, libseccomp compiles and checks them.
 *
 * Semantics are those of Docker's default profile for a container without
 * CAP_SYS_ADMIN: what it refuses is refused with EPERM (namespaces, mounts,
 * keyrings, BPF, perf, userfaultfd, io_uring, modules, kexec, clock and
 * swap changes, reboot, handle-based opens, cross-process memory access);
 * `clone3` answers ENOSYS so that libc falls back to `clone`, whose namespace
 * flags are refused; syscalls of other ABIs (i386, x32) kill the process.
 * Unlike Docker the default is to allow: a syscall this list does not name
 * works, which keeps unusual but harmless programs running.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { SYSTEM_PYTHON } from "./constants";

/** Syscalls refused with EPERM (Docker's default profile without CAP_SYS_ADMIN, plus io_uring). */
const DENIED_SYSCALLS = [
  "acct",
  "add_key",
  "bpf",
  "clock_adjtime",
  "clock_settime",
  "create_module",
  "delete_module",
  "fanotify_init",
  "finit_module",
  "fsconfig",
  "fsmount",
  "fsopen",
  "fspick",
  "get_kernel_syms",
  "get_mempolicy",
  "init_module",
  "io_uring_enter",
  "io_uring_register",
  "io_uring_setup",
  "ioperm",
  "iopl",
  "kcmp",
  "kexec_file_load",
  "kexec_load",
  "keyctl",
  "lookup_dcookie",
  "mbind",
  "mount",
  "mount_setattr",
  "move_mount",
  "move_pages",
  "name_to_handle_at",
  "nfsservctl",
  "open_by_handle_at",
  "open_tree",
  "perf_event_open",
  "pidfd_getfd",
  "pivot_root",
  "process_vm_readv",
  "process_vm_writev",
  "query_module",
  "quotactl",
  "quotactl_fd",
  "reboot",
  "request_key",
  "set_mempolicy",
  "setns",
  "settimeofday",
  "stime",
  "swapoff",
  "swapon",
  "syslog",
  "sysfs",
  "_sysctl",
  "umount",
  "umount2",
  "unshare",
  "uselib",
  "userfaultfd",
  "ustat",
  "vhangup",
  "vm86",
  "vm86old",
] as const;

/** clone(2) flags that create namespaces: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const NAMESPACE_FLAGS = [
  0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000,
];
/** AF_VSOCK: a way out to the host on VM hosts. */
const AF_VSOCK = 40;

const GENERATOR = `
import errno, sys, seccomp
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL)
for name in sys.argv[2].split(","):
    try:
        f.add_rule(seccomp.ERRNO(errno.EPERM), name)
    except (RuntimeError, ValueError):
        pass  # not a syscall on this architecture
for flag in [int(x) for x in sys.argv[3].split(",")]:
    f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, int(sys.argv[4])))
with open(sys.argv[1], "wb") as out:
    f.export_bpf(out)
`;

/**
 * Path of the compiled filter under `dataDir`, generating it when missing.
 * The file name carries a hash of the rules, so a changed list is compiled anew.
 */
export async function ensureSeccompFilter(dataDir: string): Promise<string> {
  const args = [DENIED_SYSCALLS.join(","), NAMESPACE_FLAGS.join(","), String(AF_VSOCK)];
  const hash = createHash("sha256")
    .update(GENERATOR)
    .update(args.join("\n"))
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
    execFile(SYSTEM_PYTHON, ["-I", "-c", GENERATOR, tmp, ...args], (err, _out, stderr) => {
      if (!err) return resolve();
      reject(
        new SandboxIacError(
          "unsupported",
          `compiling the sandboxes' seccomp filter with libseccomp failed: ${String(stderr).trim() || err.message}; install Debian's python3-seccomp (apt-get install python3-seccomp)`,
          { operation: "runtime.seccomp", cause: err },
        ),
      );
    });
  });
  await fs.rename(tmp, file);
  return file;
}
