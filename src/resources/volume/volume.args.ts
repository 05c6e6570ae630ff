/**
 * The `Volume` resource's data: a name and optional seed files, the
 * outputs (the volume's ID and the content hashes of the seeded files) and
 * how each behaves on a change.
 *
 * @module
 */
import { z } from "zod";
import { NAME_MAX_LENGTH, VOLUME_NAME_PATTERN } from "../../wire/ids";
import type { OutputRule } from "../core/descriptor";
import type { ChangeRule } from "../core/lifecycle";

/** One seed file: a local file uploaded to a path in the volume. */
const volumeFileSchema = z.strictObject({
  source: z.string({ error: "must be a string" }).min(1).meta({
    description:
      "Local file to upload, relative to the program (Pulumi) or module (Terraform) directory.",
  }),
  destination: z
    .string({ error: "must be a string" })
    .regex(/^\/[^\0]*$/, { error: "must be an absolute path in the volume, e.g. /data/seed.txt" })
    .refine((p) => !p.split("/").includes(".."), { error: "must not contain '..'" })
    .meta({ description: "Absolute path in the volume; missing parent directories are created." }),
  mode: z
    .number()
    .int()
    .min(0)
    .max(0o7777)
    .optional()
    .meta({ description: "Permission bits of the file. Default: 0644." }),
});

/** The zod schema of the Volume inputs. */
export const volumeArgsSchema = z.strictObject({
  name: z
    .string({ error: "must be a string" })
    .regex(VOLUME_NAME_PATTERN, {
      error: `must be 1 to ${NAME_MAX_LENGTH} letters, digits, '_' or '-' (e.g. "workspace")`,
    })
    .meta({
      description:
        "The volume's name, unique in the service; sandboxes mount the volume by this name. A change replaces the volume (and its content).",
    }),
  files: z.array(volumeFileSchema).optional().meta({
    description:
      "Seed files uploaded once; a changed file (by content hash or mode) is uploaded again in place, a file no longer listed is removed. Files written into the volume by sandboxes are left alone. Default: no seed files.",
  }),
});

/** Volume inputs. */
export type VolumeInputs = z.infer<typeof volumeArgsSchema>;
/** Volume inputs as a user writes them. */
export type VolumeArgs = VolumeInputs;

/** The outputs of the Volume besides its inputs. */
export const volumeOutputsSchema = z.strictObject({
  volumeID: z.string().meta({ description: "The volume's ID." }),
  fileDigest: z.record(z.string(), z.string()).meta({
    description:
      "Per seeded destination, the sha256 of the local file's content and its mode, as uploaded.",
  }),
});

/** Outputs of the `Volume` resource. */
export type VolumeOutputs = VolumeInputs & z.infer<typeof volumeOutputsSchema>;

/** The name is the identity; the seed files are synced in place. */
export const volumeChangeRules: Record<keyof VolumeInputs, ChangeRule> = {
  name: "replace",
  files: "update",
};

/** How the outputs behave on an in-place update. */
export const volumeOutputRules: Record<keyof z.infer<typeof volumeOutputsSchema>, OutputRule> = {
  volumeID: "stable",
  fileDigest: "recomputed",
};
