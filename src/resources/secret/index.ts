/**
 * The Secret resource (provider-neutral).
 *
 * @module
 */
export { secretDescriptor } from "./secret.descriptor";
export { secretLifecycle } from "./secret.lifecycle";
export {
  secretArgsSchema,
  secretChangeRules,
  secretOutputRules,
  secretOutputsSchema,
} from "./secret.args";
export type { SecretArgs, SecretInputs, SecretOutputs } from "./secret.args";
