/**
 * The descriptor of the `Volume` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  volumeArgsSchema,
  volumeChangeRules,
  volumeOutputRules,
  volumeOutputsSchema,
  type VolumeInputs,
  type VolumeOutputs,
} from "./volume.args";
import { volumeLifecycle } from "./volume.lifecycle";

/** `Volume`: persistent storage mounted into sandboxes by name. */
export const volumeDescriptor: ResourceDescriptor<VolumeInputs, VolumeOutputs> = {
  kind: "resource",
  typeName: "Volume",
  description:
    "A persistent volume that outlives sandboxes, mounted read-write by name into any number of sandboxes (Provisioner volumeMounts); optional seed files are uploaded once and re-uploaded in place when their content changes.",
  version: 0,
  args: volumeArgsSchema,
  outputs: volumeOutputsSchema,
  changeRules: volumeChangeRules,
  outputRules: volumeOutputRules,
  sensitiveInputs: [],
  sensitiveOutputs: [],
  replacement: {
    deleteFirst: true,
    reason:
      "volume names are unique: the old volume must be deleted before one with the same name is created",
  },
  lifecycle: volumeLifecycle,
};
