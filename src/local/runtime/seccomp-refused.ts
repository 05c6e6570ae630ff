/**
 * What the sandboxes' seccomp filter (compiled by seccomp.ts) refuses by name,
 * on top of Docker's default profile (seccomp-allowed.ts): with EPERM, with
 * ENOSYS, and the numbers of the newest calls an older libseccomp cannot name.
 *
 * @module
 */

/**
 * Refused with EPERM by name, although the default refuses them too: the
 * deliberate refusals (namespaces, mounts, keyrings, BPF, perf, userfaultfd,
 * io_uring, modules, kexec, clock and swap changes, handle-based opens,
 * cross-process memory access, NUMA policy) and the calls issue 18 found let
 * through (`migrate_pages`, `process_madvise`, `open_tree_attr`,
 * `file_getattr`/`file_setattr`, `lsm_*`). Naming them keeps them EPERM even
 * where libseccomp does not know the name (they are then given by number),
 * and sets the newest syscall the lists know (see {@link ENOSYS_SYSCALLS}).
 */
export const REFUSED_SYSCALLS = [
  "acct",
  "add_key",
  "bpf",
  "clock_settime",
  "create_module",
  "delete_module",
  "fanotify_init",
  "file_getattr",
  "file_setattr",
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
  "lsm_get_self_attr",
  "lsm_list_modules",
  "lsm_set_self_attr",
  "mbind",
  "migrate_pages",
  "mount",
  "mount_setattr",
  "move_mount",
  "move_pages",
  "name_to_handle_at",
  "nfsservctl",
  "open_by_handle_at",
  "open_tree",
  "open_tree_attr",
  "perf_event_open",
  "pidfd_getfd",
  "pivot_root",
  "process_madvise",
  "process_vm_readv",
  "process_vm_writev",
  "query_module",
  "quotactl",
  "quotactl_fd",
  "reboot",
  "request_key",
  "set_mempolicy",
  "set_mempolicy_home_node",
  "setdomainname",
  "sethostname",
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

/**
 * Refused with ENOSYS, the errno programs fall back from: `clone3` (libc then
 * uses `clone`, whose flags the filter can read), the kernel AIO calls (their
 * contexts come from the host-wide `fs.aio-max-nr`, which one sandbox could
 * take whole; libaio users such as databases fall back to threads), and the
 * mount listing calls (tools fall back to `/proc/self/mountinfo`). Any syscall
 * numbered after the newest one these lists name also answers ENOSYS (see
 * seccomp.ts).
 */
export const ENOSYS_SYSCALLS = [
  "clone3",
  "io_cancel",
  "io_destroy",
  "io_getevents",
  "io_pgetevents",
  "io_pgetevents_time64",
  "io_setup",
  "io_submit",
  "listmount",
  "statmount",
] as const;

/**
 * Numbers of syscalls from 424 on, which every architecture but alpha and
 * mips shares (asm-generic), for names an older libseccomp cannot resolve.
 */
export const UNIFIED_SYSCALL_NUMBERS: Readonly<Record<string, number>> = {
  listmount: 458,
  statmount: 457,
  lsm_get_self_attr: 459,
  lsm_set_self_attr: 460,
  lsm_list_modules: 461,
  mseal: 462,
  setxattrat: 463,
  getxattrat: 464,
  listxattrat: 465,
  removexattrat: 466,
  open_tree_attr: 467,
  file_getattr: 468,
  file_setattr: 469,
};
