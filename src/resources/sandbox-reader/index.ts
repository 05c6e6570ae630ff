/**
 * The SandboxReader resource (provider-neutral).
 *
 * @module
 */
export { sandboxReaderLifecycle } from "./sandbox-reader.lifecycle";
export {
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
  sandboxReaderSecretOutputs,
} from "./sandbox-reader.args";
export type {
  SandboxReaderArgs,
  SandboxReaderInputs,
  SandboxReaderOutputs,
} from "./sandbox-reader.args";
