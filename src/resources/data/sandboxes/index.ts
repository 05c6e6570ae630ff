/**
 * The `sandboxes` data source (provider-neutral).
 *
 * @module
 */
export { sandboxesDataSource } from "./sandboxes.descriptor";
export {
  listedSandboxSchema,
  sandboxesDataArgsSchema,
  sandboxesDataResultSchema,
} from "./sandboxes.args";
export type { ListedSandboxFields, SandboxesDataArgs, SandboxesDataResult } from "./sandboxes.args";
export { readSandboxes } from "./sandboxes.read";
