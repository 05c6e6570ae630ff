/**
 * The descriptor of the `sandboxes` data source.
 *
 * @module
 */
import type { DataSourceDescriptor } from "../../core/descriptor";
import {
  sandboxesDataArgsSchema,
  sandboxesDataResultSchema,
  type SandboxesDataArgs,
  type SandboxesDataResult,
} from "./sandboxes.args";
import { readSandboxes } from "./sandboxes.read";

/** `sandboxes`: every sandbox matching metadata and state filters. */
export const sandboxesDataSource: DataSourceDescriptor<SandboxesDataArgs, SandboxesDataResult> = {
  kind: "data",
  typeName: "sandboxes",
  description:
    "Lists the sandboxes matching metadata and state filters (running and paused by default).",
  args: sandboxesDataArgsSchema,
  result: sandboxesDataResultSchema,
  sensitiveOutputs: [],
  read: readSandboxes,
};
