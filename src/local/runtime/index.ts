/**
 * The Linux sandbox runtime: a user namespace, network namespace and disk
 * image per sandbox, idmapped overlay root filesystems, seccomp, bubblewrap
 * and cgroup limits. See {@link createRuntime}.
 *
 * @module
 */
export { createRuntime } from "./runtime";
