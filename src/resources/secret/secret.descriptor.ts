/**
 * The descriptor of the `Secret` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  secretArgsSchema,
  secretChangeRules,
  secretOutputRules,
  secretOutputsSchema,
  type SecretInputs,
  type SecretOutputs,
  secretSensitiveInputs,
} from "./secret.args";
import { secretLifecycle } from "./secret.lifecycle";

/** `Secret`: a named value stored by the service; the value is write-only. */
export const secretDescriptor: ResourceDescriptor<SecretInputs, SecretOutputs> = {
  kind: "resource",
  typeName: "Secret",
  description:
    "A named secret value stored by the service (encrypted at rest by the local service) and never read back; a value or metadata change stores a new version in place, a new name replaces it.",
  version: 0,
  args: secretArgsSchema,
  outputs: secretOutputsSchema,
  changeRules: secretChangeRules,
  outputRules: secretOutputRules,
  sensitiveInputs: secretSensitiveInputs,
  sensitiveOutputs: [],
  replacement: {
    deleteFirst: true,
    reason:
      "secret names are unique: the old secret must be deleted before one with the same name is created",
  },
  lifecycle: secretLifecycle,
};
