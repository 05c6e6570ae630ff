/**
 * zod schemas of the sandbox endpoints' request bodies (docs/control-api.md#sandbox-schemas).
 * Unknown fields are ignored, as the real API does.
 *
 * @module
 */
import { z } from "zod";

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

/** An int32, as the OpenAPI declares most integers. */
export const int32 = z.number().int().min(INT32_MIN).max(INT32_MAX);

const stringMap = z.record(z.string(), z.string());

/** `NewSandbox`. */
export const newSandboxSchema = z.object({
  templateID: z.string().min(1),
  timeout: int32.optional(),
  autoPause: z.boolean().optional(),
  autoPauseMemory: z.boolean().optional(),
  autoResume: z.object({ enabled: z.boolean() }).nullish(),
  secure: z.boolean().optional(),
  allow_internet_access: z.boolean().optional(),
  metadata: stringMap.nullish(),
  envVars: stringMap.nullish(),
  mcp: z.record(z.string(), z.unknown()).nullish(),
  network: z.record(z.string(), z.unknown()).nullish(),
  volumeMounts: z.array(z.object({ name: z.string(), path: z.string() })).nullish(),
});

/** `ResumedSandbox`. */
export const resumeSchema = z.object({
  timeout: int32.optional(),
  autoPause: z.boolean().optional(),
  memory: z.boolean().optional(),
});

/** `ConnectSandbox` (`/sandboxes/:id/connect`): `timeout` is required. */
export const connectSchema = z.object({ timeout: int32.min(0), memory: z.boolean().optional() });

/**
 * `ConnectSandboxV2` (`/v2/sandboxes/:id/connect`): the 2.51 SDK sends `{}`
 * when the caller gave no timeout.
 */
export const connectV2Schema = z.object({
  timeout: int32.min(0).optional(),
  memory: z.boolean().optional(),
});

/** Lifetime given to a sandbox resumed by a v2 connect that named none, in seconds (the SDK's default). */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 300;

/** The pause body. */
export const pauseSchema = z.object({ memory: z.boolean().optional() });

/** The `/timeout` body; negative counts as 0. */
export const timeoutSchema = z.object({ timeout: int32 });

/** The `/refreshes` body. */
export const refreshSchema = z.object({ duration: z.number().int().min(0).max(3600).optional() });

/** The default sandbox timeout of the API, in seconds. */
export const DEFAULT_TIMEOUT_SEC = 15;
/** `/refreshes` never extends by less than this, in seconds. */
export const MIN_REFRESH_SEC = 15;
