/**
 * The sandbox endpoints' request bodies (docs/control-api.md#sandbox-schemas): the wire's
 * schemas (src/wire/control-requests.ts), extended where the service is
 * deliberately more lenient. Absent fields may be `null` (the SDKs send it);
 * timeouts are any int32, so that the handler answers an out-of-range one with
 * E2B's own message. Unknown fields are dropped, as the real API ignores them.
 *
 * @module
 */
import { z } from "zod";
import {
  ConnectSandboxBody,
  ConnectSandboxV2Body,
  int32,
  NewSandboxBody,
  ResumedSandboxBody,
  SandboxPauseBody,
  SandboxRefreshBody,
  SandboxTimeoutBody,
} from "../../../wire/control-requests";

const stringMap = z.record(z.string(), z.string());

/** `NewSandbox` (also `NewSandboxV2`: the v2 route ignores `secure`). */
export const newSandboxSchema = NewSandboxBody.extend({
  timeout: int32.optional(),
  autoResume: z.object({ enabled: z.boolean() }).nullish(),
  metadata: stringMap.nullish(),
  envVars: stringMap.nullish(),
  mcp: z.record(z.string(), z.unknown()).nullish(),
  network: z.record(z.string(), z.unknown()).nullish(),
  volumeMounts: z.array(z.object({ name: z.string(), path: z.string() })).nullish(),
}).strip();

/** `ResumedSandbox`. */
export const resumeSchema = ResumedSandboxBody.extend({ timeout: int32.optional() }).strip();

/** `ConnectSandbox` (`/sandboxes/:id/connect`): `timeout` is required. */
export const connectSchema = ConnectSandboxBody.strip();

/**
 * `ConnectSandboxV2` (`/v2/sandboxes/:id/connect`): the 2.51 SDK sends `{}`
 * when the caller gave no timeout.
 */
export const connectV2Schema = ConnectSandboxV2Body.strip();

/** Lifetime given to a sandbox resumed by a v2 connect that named none, in seconds (the SDK's default). */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 300;

/** The pause body. */
export const pauseSchema = SandboxPauseBody.strip();

/** The `/timeout` body; negative counts as 0. */
export const timeoutSchema = SandboxTimeoutBody.extend({ timeout: int32 }).strip();

/** The `/refreshes` body. */
export const refreshSchema = SandboxRefreshBody.strip();

/** The default sandbox timeout of the API, in seconds. */
export const DEFAULT_TIMEOUT_SEC = 15;
/** `/refreshes` never extends by less than this, in seconds. */
export const MIN_REFRESH_SEC = 15;
