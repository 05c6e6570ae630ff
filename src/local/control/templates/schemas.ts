/**
 * zod schemas of the template and snapshot request bodies and queries
 * (docs/control-api.md#template-endpoints and docs/control-api.md#template-schemas). Objects drop unknown fields: the SDK puts
 * client-only fields (`forceUpload`, `gzip`, `minFreeDiskMb`…) in them.
 *
 * @module
 */
import { z } from "zod";
import { LOG_LEVELS } from "./model";
import { MAX_PAGE_SIZE } from "./constants";

const optionalString = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

/** E2B's `maxLength` of a template name or alias (tag included). */
export const MAX_TEMPLATE_NAME_LENGTH = 128;

const templateName = z
  .string()
  .max(MAX_TEMPLATE_NAME_LENGTH)
  .nullish()
  .transform((v) => v ?? undefined);

/** `TemplateBuildRequestV3`. */
export const BuildRequestV3 = z.object({
  name: templateName,
  tags: z.array(z.string()).nullish(),
  alias: templateName,
  teamID: optionalString,
  cpuCount: z.number().int().min(1).nullish(),
  memoryMB: z.number().int().min(128).nullish(),
});

/** `TemplateStep`. */
export const TemplateStepSchema = z.object({
  type: z.string().min(1),
  args: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  filesHash: optionalString,
  force: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
});

/** `TemplateBuildStartV2`. */
export const BuildStartV2 = z.object({
  fromImage: optionalString,
  fromTemplate: optionalString,
  fromImageRegistry: z.unknown().optional(),
  force: z.boolean().nullish(),
  steps: z
    .array(TemplateStepSchema)
    .nullish()
    .transform((v) => v ?? []),
  startCmd: optionalString,
  readyCmd: optionalString,
});

/** `{public?: bool}` of the PATCH routes. */
export const TemplateUpdate = z.object({ public: z.boolean().nullish() });

/** `AssignTemplateTagsRequest`. */
export const AssignTags = z.object({ target: z.string().min(1), tags: z.array(z.string()).min(1) });

/** `DeleteTemplateTagsRequest`. */
export const DeleteTags = z.object({ name: z.string().min(1), tags: z.array(z.string()).min(1) });

/** `{name?}` of `POST /sandboxes/{id}/snapshots`. */
export const SnapshotRequest = z.object({ name: optionalString });

const intParam = (min: number, max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .max(max)
    .optional()
    .transform((v) => v ?? fallback);

const level = z.enum(LOG_LEVELS).optional();

/** Query of `GET .../builds/{buildID}/status`. */
export const BuildStatusQuery = z.object({
  logsOffset: intParam(0, 2 ** 31 - 1, 0),
  limit: intParam(0, 100, 100),
  level,
});

/** Query of `GET .../builds/{buildID}/logs`. */
export const BuildLogsQuery = z.object({
  cursor: z.coerce.number().int().min(0).optional(),
  limit: intParam(0, 100, 100),
  direction: z
    .enum(["forward", "backward"])
    .optional()
    .transform((v) => v ?? "forward"),
  level,
  source: z.enum(["temporary", "persistent"]).optional(),
});

/** Query of the paginated lists (`GET /snapshots`, `GET /v2/templates`). */
export const PageQuery = z.object({
  limit: intParam(1, MAX_PAGE_SIZE, MAX_PAGE_SIZE),
  nextToken: z.string().optional(),
  sandboxID: z.string().optional(),
  name: z.string().optional(),
  teamID: z.string().optional(),
});

/** The query string as a plain object (first value of each key) for zod. */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) if (!(k in out)) out[k] = v;
  return out;
}
