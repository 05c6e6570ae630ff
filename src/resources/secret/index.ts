/**
 * The Secret resource (provider-neutral).
 *
 * @module
 */
export { secretDescriptor } from "./secret.descriptor";
export { secretLifecycle } from "./secret.lifecycle";
export { secretArgsSchema, secretChangeRules, secretOutputsSchema } from "./secret.args";
export type { SecretArgs, SecretOutputs } from "./secret.args";
