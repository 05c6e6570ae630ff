/**
 * zod schemas of the volume, volume-content and secret response bodies
 * (schema/control.openapi.yaml), checked at the client's boundary.
 *
 * @module
 */
import { z } from "zod";
import type { components } from "../../gen/control.gen";

const dateTime = z.iso.datetime({ offset: true });

/** `Volume`. */
export type Volume = components["schemas"]["Volume"];
/** `VolumeAndToken`. */
export type VolumeAndToken = components["schemas"]["VolumeAndToken"];
/** `VolumeEntryStat`. */
export type VolumeEntryStat = components["schemas"]["VolumeEntryStat"];
/** `Secret` (metadata only; the value is never answered). */
export type SecretInfo = components["schemas"]["Secret"];

/** `Volume`. */
export const VolumeSchema: z.ZodType<Volume> = z.looseObject({
  volumeID: z.string().min(1),
  name: z.string().min(1),
});

/** `VolumeAndToken`. */
export const VolumeAndTokenSchema: z.ZodType<VolumeAndToken> = z.looseObject({
  volumeID: z.string().min(1),
  name: z.string().min(1),
  token: z.string().min(1),
  domain: z.string().exactOptional(),
});

/** `VolumeEntryStat`. */
export const VolumeEntryStatSchema: z.ZodType<VolumeEntryStat> = z.looseObject({
  name: z.string(),
  type: z.enum(["unknown", "file", "directory", "symlink"]),
  path: z.string(),
  size: z.number().int().min(0),
  mode: z.number().int().min(0),
  uid: z.number().int().min(0),
  gid: z.number().int().min(0),
  atime: dateTime,
  mtime: dateTime,
  ctime: dateTime,
  target: z.string().exactOptional(),
});

/** `Secret`. */
export const SecretSchema: z.ZodType<SecretInfo> = z.looseObject({
  secretID: z.string().min(1),
  name: z.string().min(1),
  currentVersion: z.number().int().min(1),
  metadata: z.record(z.string(), z.string()),
  createdAt: dateTime,
  updatedAt: dateTime,
});
