/**
 * The `sandboxes` data source (provider-neutral).
 *
 * @module
 */
export { sandboxesDataSource } from "./sandboxes.descriptor";
export type { ListedSandboxFields, SandboxesDataArgs, SandboxesDataResult } from "./sandboxes.args";
