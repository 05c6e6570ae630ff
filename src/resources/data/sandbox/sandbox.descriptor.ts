/**
 * The descriptor of the `sandbox` data source.
 *
 * @module
 */
import type { DataSourceDescriptor } from "../../core/descriptor";
import {
  sandboxDataArgsSchema,
  sandboxFieldsSchema,
  sandboxSensitiveOutputs,
  type SandboxDataArgs,
  type SandboxFields,
} from "./sandbox.args";
import { readSandbox } from "./sandbox.read";

/** `sandbox`: one running or paused sandbox by ID, optionally with its latest metric sample. */
export const sandboxDataSource: DataSourceDescriptor<SandboxDataArgs, SandboxFields> = {
  kind: "data",
  typeName: "sandbox",
  description:
    "Reads a running or paused sandbox by ID (optionally with its latest metric sample). A sandbox that does not exist is an error.",
  args: sandboxDataArgsSchema,
  result: sandboxFieldsSchema,
  sensitiveOutputs: sandboxSensitiveOutputs,
  read: readSandbox,
};
