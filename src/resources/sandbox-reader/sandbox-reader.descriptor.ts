/**
 * The descriptor of the `SandboxReader` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
  sandboxReaderOutputRules,
  sandboxReaderOutputsSchema,
  sandboxReaderSecretOutputs,
  type SandboxReaderInputs,
  type SandboxReaderOutputs,
} from "./sandbox-reader.args";
import { sandboxReaderLifecycle } from "./sandbox-reader.lifecycle";

/** `SandboxReader`: an existing sandbox's fields as outputs; reading only. */
export const sandboxReaderDescriptor: ResourceDescriptor<
  SandboxReaderInputs,
  SandboxReaderOutputs
> = {
  kind: "resource",
  typeName: "SandboxReader",
  description:
    "Reads an existing sandbox (and optionally its latest metric sample) into outputs. It never changes the sandbox; deleting it deletes nothing.",
  version: 0,
  args: sandboxReaderArgsSchema,
  outputs: sandboxReaderOutputsSchema,
  changeRules: sandboxReaderChangeRules,
  outputRules: sandboxReaderOutputRules,
  sensitiveInputs: [],
  sensitiveOutputs: sandboxReaderSecretOutputs,
  replacement: { deleteFirst: false, reason: "a reader holds nothing: either order is fine" },
  lifecycle: sandboxReaderLifecycle,
};
