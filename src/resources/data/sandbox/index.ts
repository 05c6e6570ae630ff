/**
 * The `sandbox` data source (provider-neutral).
 *
 * @module
 */
export { sandboxDataSource } from "./sandbox.descriptor";
export { sandboxDataArgsSchema, sandboxFieldsSchema } from "./sandbox.args";
export type { SandboxDataArgs, SandboxFields, SandboxMetricSample } from "./sandbox.args";
export { readSandbox } from "./sandbox.read";
