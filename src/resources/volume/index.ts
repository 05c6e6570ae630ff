/**
 * The Volume resource (provider-neutral).
 *
 * @module
 */
export { volumeDescriptor } from "./volume.descriptor";
export { volumeLifecycle } from "./volume.lifecycle";
export {
  volumeArgsSchema,
  volumeChangeRules,
  volumeFileSchema,
  volumeOutputRules,
  volumeOutputsSchema,
} from "./volume.args";
export type { VolumeArgs, VolumeInputs, VolumeOutputs } from "./volume.args";
