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
  sandboxReaderOutputRules,
  sandboxReaderOutputsSchema,
  sandboxReaderSecretOutputs,
} from "./sandbox-reader.args";
export type {
  SandboxReaderArgs,
  SandboxReaderInputs,
  SandboxReaderMetrics,
  SandboxReaderOutputs,
} from "./sandbox-reader.args";
