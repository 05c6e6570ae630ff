/**
 * The Volume resource (provider-neutral).
 *
 * @module
 */
export { volumeDescriptor } from "./volume.descriptor";
export { volumeLifecycle } from "./volume.lifecycle";
export { volumeArgsSchema, volumeChangeRules, volumeOutputsSchema } from "./volume.args";
export type { VolumeArgs, VolumeOutputs } from "./volume.args";
