/**
 * The request bodies of the control API as schema/control.openapi.yaml
 * declares them, once, for both ends: the control client checks its
 * arguments with them (loose, so newer fields pass), and the local service
 * `.extend()`s them where it is deliberately more lenient (it takes `null`
 * for an absent field, as the SDKs send it, and answers out-of-range
 * timeouts with E2B's own message from the handler).
 *
 * Every object is loose: the real API ignores unknown fields and the SDKs
 * send client-only ones (`forceUpload`, `gzip`, ...).
 *
 * @module
 */
import { z } from "zod";
import type { components } from "../gen/control.gen";

type Schemas = components["schemas"];

/** An OpenAPI `int32`. */
export const int32 = z
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);

/** `LogLevel`, lowest first. */
export const LOG_LEVELS = [
  "debug",
  "info",
  "warn",
  "error",
] as const satisfies readonly Schemas["LogLevel"][];

/** `LogLevel`. */
export const logLevel = z.enum(LOG_LEVELS);
/** The direction of a log query. */
export const logDirection = z.enum(["forward", "backward"]);
/** The source of a build-log query. */
export const logSource = z.enum(["temporary", "persistent"]);

const stringMap = z.record(z.string(), z.string());

/** `SandboxVolumeMount`. */
const SandboxVolumeMountBody = z.looseObject({
  name: z.string().min(1),
  path: z.string().min(1),
});

const newSandboxFields = {
  templateID: z.string().min(1),
  timeout: int32.min(1).optional(),
  autoPause: z.boolean().optional(),
  autoPauseMemory: z.boolean().optional(),
  autoResume: z.looseObject({ enabled: z.boolean() }).optional(),
  allow_internet_access: z.boolean().optional(),
  network: z.record(z.string(), z.unknown()).optional(),
  metadata: stringMap.optional(),
  envVars: stringMap.optional(),
  mcp: z.record(z.string(), z.unknown()).optional(),
  volumeMounts: z.array(SandboxVolumeMountBody).optional(),
};

/** `NewSandbox`. */
export const NewSandboxBody = z.looseObject({
  ...newSandboxFields,
  secure: z.boolean().optional(),
});

/** `NewSandboxV2`: `NewSandbox` without `secure` (every v2 sandbox is secured). */
export const NewSandboxV2Body = z.looseObject(newSandboxFields);

/** `ResumedSandbox`. */
export const ResumedSandboxBody = z.looseObject({
  timeout: int32.min(1).optional(),
  autoPause: z.boolean().optional(),
  memory: z.boolean().optional(),
});

/** `ConnectSandbox` (v1): `timeout` is required. */
export const ConnectSandboxBody = z.looseObject({
  timeout: int32.min(0),
  memory: z.boolean().optional(),
});

/** `ConnectSandboxV2`. */
export const ConnectSandboxV2Body = z.looseObject({
  timeout: int32.min(0).optional(),
  memory: z.boolean().optional(),
});

/**
 * `SandboxEgressProxyConfig`: its shape only. E2B's own rules (`host:port`,
 * 255 bytes per credential, a password only with a username) are checked by
 * the service (egress-proxy.ts), whose messages never show the password.
 */
const SandboxEgressProxyBody = z.looseObject({
  address: z.string(),
  username: z.string().optional(),
  password: z.string().optional(),
});

/** `SandboxNetworkRule`. */
const SandboxNetworkRuleBody = z.looseObject({
  transform: z.looseObject({ headers: stringMap.optional() }).optional(),
});

/**
 * `SandboxNetworkUpdate` (`PUT /sandboxes/{id}/network`): every field
 * replaces the current one, an omitted field is cleared (no `egressProxy`:
 * flows go out directly).
 */
export const SandboxNetworkUpdateBody = z.looseObject({
  allowOut: z.array(z.string()).optional(),
  denyOut: z.array(z.string()).optional(),
  rules: z.record(z.string(), z.array(SandboxNetworkRuleBody)).optional(),
  egressProxy: SandboxEgressProxyBody.nullable().optional(),
  allow_internet_access: z.boolean().optional(),
});

/** `SandboxPauseRequest`. */
export const SandboxPauseBody = z.looseObject({ memory: z.boolean().optional() });

/** `SandboxTimeoutRequest`. */
export const SandboxTimeoutBody = z.looseObject({ timeout: int32.min(0) });

/** `SandboxRefreshRequest`. */
export const SandboxRefreshBody = z.looseObject({
  duration: z.int().min(0).max(3600).optional(),
});

/** `SandboxSnapshotRequest`. */
export const SandboxSnapshotBody = z.looseObject({ name: z.string().min(1).optional() });

/** `TemplateBuildRequestV3`. */
export const TemplateBuildRequestV3Body = z.looseObject({
  name: z.string().min(1).max(128).optional(),
  tags: z.array(z.string().min(1)).optional(),
  alias: z.string().min(1).max(128).optional(),
  teamID: z.string().min(1).optional(),
  cpuCount: int32.min(1).optional(),
  memoryMB: int32.min(128).optional(),
  minFreeDiskMb: int32.min(0).optional(),
});

/** `TemplateStep`. */
export const TemplateStepBody = z.looseObject({
  type: z.string().min(1),
  args: z.array(z.string()).optional(),
  filesHash: z.string().optional(),
  force: z.boolean().optional(),
});

/** `TemplateBuildStartV2`. */
export const TemplateBuildStartV2Body = z.looseObject({
  fromImage: z.string().optional(),
  fromTemplate: z.string().optional(),
  fromImageRegistry: z.unknown().optional(),
  force: z.boolean().optional(),
  steps: z.array(TemplateStepBody).optional(),
  startCmd: z.string().optional(),
  readyCmd: z.string().optional(),
});

/** `TemplateUpdateRequest`. */
export const TemplateUpdateBody = z.looseObject({ public: z.boolean().optional() });

/** `AssignTemplateTagsRequest`. */
export const AssignTemplateTagsBody = z.looseObject({
  target: z.string().min(1),
  tags: z.array(z.string().min(1)).min(1),
});

/** `DeleteTemplateTagsRequest`. */
export const DeleteTemplateTagsBody = z.looseObject({
  name: z.string().min(1),
  tags: z.array(z.string().min(1)).min(1),
});
