/**
 * The SandboxReader resource (provider-neutral).
 *
 * @module
 */
export { sandboxReaderDescriptor } from "./sandbox-reader.descriptor";
export { sandboxReaderLifecycle } from "./sandbox-reader.lifecycle";
export {
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
  sandboxReaderOutputsSchema,
} from "./sandbox-reader.args";
export type { SandboxReaderArgs, SandboxReaderOutputs } from "./sandbox-reader.args";
