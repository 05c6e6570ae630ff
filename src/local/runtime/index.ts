/**
 * The Linux sandbox runtime: bubblewrap namespaces, overlay root filesystems
 * and cgroup limits. See {@link createRuntime}.
 *
 * @module
 */
export { createRuntime } from "./runtime";
export type { RuntimeOptions } from "./runtime";
export type { RuntimeSandbox, SandboxRuntime, SandboxSpec, SandboxStats } from "./types";
