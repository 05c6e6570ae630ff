/**
 * The `Secret` resource's data: inputs (the value is a secret), outputs (the
 * service's metadata) and how each behaves on a change.
 *
 * @module
 */
import { z } from "zod";
import {
  hasSecretIDPrefix,
  NAME_MAX_LENGTH,
  SECRET_ID_PREFIX,
  SECRET_NAME_PATTERN,
} from "../../wire/ids";
import type { OutputRule } from "../core/descriptor";
import type { ChangeRule } from "../core/lifecycle";

/** The zod schema of the Secret inputs. */
export const secretArgsSchema = z.strictObject({
  name: z
    .string({ error: "must be a string" })
    .regex(SECRET_NAME_PATTERN, {
      error: `must be 1 to ${NAME_MAX_LENGTH} letters, digits, '_' or '-' (e.g. "openai-key")`,
    })
    .refine((n) => !hasSecretIDPrefix(n), {
      error: `must not start with '${SECRET_ID_PREFIX}' (reserved for secret IDs)`,
    })
    .meta({
      description:
        "The secret's name, unique in the service; lower-cased by the service. A change replaces the secret.",
    }),
  value: z.string({ error: "must be a string" }).meta({
    description:
      "The secret's value: write-only, never read back, kept out of state in clear where the tool allows. A change stores a new version in place.",
  }),
  metadata: z.record(z.string(), z.string().max(1024)).optional().meta({
    description:
      "Metadata of the secret (at most 32 string entries). A change updates it in place. Default: no metadata.",
  }),
});

/** Secret inputs. */
export type SecretInputs = z.infer<typeof secretArgsSchema>;
/** Secret inputs as a user writes them. */
export type SecretArgs = SecretInputs;

/** The outputs of the Secret besides its inputs. */
export const secretOutputsSchema = z.strictObject({
  secretID: z.string().meta({ description: "The secret's ID (sec_...)." }),
  currentVersion: z
    .number()
    .int()
    .meta({ description: "The version the service serves; each value change adds one." }),
  createdAt: z.string().meta({ description: "When the secret was created (RFC 3339)." }),
  updatedAt: z.string().meta({ description: "When the secret was last changed (RFC 3339)." }),
});

/** Outputs of the `Secret` resource: every input plus the metadata. */
export type SecretOutputs = SecretInputs & z.infer<typeof secretOutputsSchema>;

/** The name is the identity; the value and metadata change in place. */
export const secretChangeRules: Record<keyof SecretInputs, ChangeRule> = {
  name: "replace",
  value: "update",
  metadata: "update",
};

/** How the outputs behave on an in-place update. */
export const secretOutputRules: Record<keyof z.infer<typeof secretOutputsSchema>, OutputRule> = {
  secretID: "stable",
  currentVersion: "recomputed",
  createdAt: "stable",
  updatedAt: "recomputed",
};

/** Inputs whose values are secrets: never shown in messages, sensitive in every adapter. */
export const secretSensitiveInputs = ["value"] as const;
