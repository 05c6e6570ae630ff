/**
 * The `sandbox` data source's data: its arguments and the fields of the
 * sandbox it returns (shared with the `SandboxReader` resource, in core).
 *
 * @module
 */
import { sandboxQuerySchema, type SandboxQuery } from "../../core/sandbox-fields";

export {
  sandboxFieldsSchema,
  sandboxSensitiveOutputs,
  type SandboxFields,
} from "../../core/sandbox-fields";

/** The arguments of the `sandbox` data source. */
export const sandboxDataArgsSchema = sandboxQuerySchema;
/** The `sandbox` data source's arguments. */
export type SandboxDataArgs = SandboxQuery;
