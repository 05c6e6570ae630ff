/**
 * The template and snapshot request bodies and queries (docs/control-api.md#template-endpoints
 * and docs/control-api.md#template-schemas): the wire's body schemas (src/wire/control-requests.ts), extended
 * where the service is deliberately more lenient: an absent field may be
 * `null` (the SDKs send it), and names are checked by the handler so that a
 * bad one gets the grammar's own message. Unknown fields are dropped: the SDK
 * puts client-only fields (`forceUpload`, `gzip`, `minFreeDiskMb`...) in them.
 *
 * @module
 */
import { z } from "zod";
import {
  AssignTemplateTagsBody,
  DeleteTemplateTagsBody,
  LOG_LEVELS,
  SandboxSnapshotBody,
  TemplateBuildRequestV3Body,
  TemplateBuildStartV2Body,
  TemplateStepBody,
  TemplateUpdateBody,
} from "../../../wire/control-requests";
import { MAX_TEMPLATE_NAME_LENGTH } from "../../../wire/template-names";
import { MAX_PAGE_SIZE } from "./constants";

const optionalString = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

const templateName = z
  .string()
  .max(MAX_TEMPLATE_NAME_LENGTH)
  .nullish()
  .transform((v) => v ?? undefined);

/** `TemplateBuildRequestV3`. */
export const BuildRequestV3 = TemplateBuildRequestV3Body.extend({
  name: templateName,
  tags: z.array(z.string()).nullish(),
  alias: templateName,
  teamID: optionalString,
  cpuCount: z.number().int().min(1).nullish(),
  memoryMB: z.number().int().min(128).nullish(),
  minFreeDiskMb: z.unknown().optional(),
}).strip();

/** `TemplateStep`: `args` and `force` get their documented defaults. */
const TemplateStepSchema = TemplateStepBody.extend({
  args: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  filesHash: optionalString,
  force: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
}).strip();

/** `TemplateBuildStartV2`. */
export const BuildStartV2 = TemplateBuildStartV2Body.extend({
  fromImage: optionalString,
  fromTemplate: optionalString,
  // Checked by the handler (imageSourceOf), so that no message echoes a password.
  fromImageRegistry: z.unknown().optional(),
  force: z.boolean().nullish(),
  steps: z
    .array(TemplateStepSchema)
    .nullish()
    .transform((v) => v ?? []),
  startCmd: optionalString,
  readyCmd: optionalString,
}).strip();

/** `{public?: bool}` of the PATCH routes. */
export const TemplateUpdate = TemplateUpdateBody.extend({ public: z.boolean().nullish() }).strip();

/** `AssignTemplateTagsRequest`: tags are checked by the handler, each named by its index. */
export const AssignTags = AssignTemplateTagsBody.extend({
  tags: z.array(z.string()).min(1),
}).strip();

/** `DeleteTemplateTagsRequest`: tags are checked by the handler, each named by its index. */
export const DeleteTags = DeleteTemplateTagsBody.extend({
  tags: z.array(z.string()).min(1),
}).strip();

/** `{name?}` of `POST /sandboxes/{id}/snapshots`. */
export const SnapshotRequest = SandboxSnapshotBody.extend({ name: optionalString }).strip();

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
