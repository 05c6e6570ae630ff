/**
 * The `sandbox` data source (provider-neutral).
 *
 * @module
 */
export { sandboxDataSource } from "./sandbox.descriptor";
export type { SandboxDataArgs, SandboxFields } from "./sandbox.args";
