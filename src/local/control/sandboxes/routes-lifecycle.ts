/**
 * Control routes that change a sandbox: create, kill, pause, resume, connect,
 * timeout and refreshes (docs/control-api.md#sandbox-endpoints; status codes are exact).
 *
 * @module
 */
import type { z } from "zod";
import { DEFAULT_TEMPLATE } from "../../../wire/control";
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import type { ResolvedVolumeMount } from "../volumes/mounts";
import { parseSandboxID } from "./ids";
import type { SandboxManager } from "./manager";
import { networkRoutes, parseCreateNetwork } from "./network";
import {
  DEFAULT_TIMEOUT_SEC,
  MIN_REFRESH_SEC,
  connectSchema,
  connectV2Schema,
  newSandboxSchema,
  pauseSchema,
  refreshSchema,
  resumeSchema,
  timeoutSchema,
} from "./schemas";

/** The sandbox id of a `:sandboxID` route. */
export function idParam(req: ControlRequest): string {
  return parseSandboxID(req.params.sandboxID ?? "");
}

async function requiredBody(req: ControlRequest): Promise<unknown> {
  const body = await req.json();
  if (body === undefined)
    throw serviceError("invalid_argument", "body: a JSON object is required, got nothing");
  return body;
}

async function optionalBody(req: ControlRequest): Promise<unknown> {
  return (await req.json()) ?? {};
}

function positiveTimeout(timeout: number | undefined): number {
  const t = timeout ?? DEFAULT_TIMEOUT_SEC;
  if (t <= 0)
    throw serviceError(
      "invalid_argument",
      `Timeout must be greater than 0, got ${t}: pass the sandbox lifetime in seconds`,
    );
  return t;
}

/** The create body's type. */
type NewSandboxBody = z.infer<typeof newSandboxSchema>;

/**
 * Whether a timeout's auto-pause keeps memory. `autoPauseMemory: false` asks
 * for a filesystem-only pause, which only an auto-pausing sandbox without
 * auto-resume can have: a filesystem-only snapshot is resumed by `connect`,
 * never by traffic.
 */
function autoPauseMemory(body: NewSandboxBody): boolean {
  if (body.autoPauseMemory !== false) return true;
  if (body.autoPause !== true)
    throw serviceError(
      "invalid_argument",
      "body.autoPauseMemory: false applies only with autoPause: true: set autoPause or drop autoPauseMemory",
    );
  if (body.autoResume?.enabled)
    throw serviceError(
      "invalid_argument",
      "body.autoPauseMemory: false cannot be combined with autoResume: a filesystem-only snapshot is resumed with connect, not by traffic; drop one of them",
    );
  return false;
}

/** Without a volume store, naming a volume is a 400. */
function noMounts(raw: NewSandboxBody["volumeMounts"]): ResolvedVolumeMount[] {
  if (raw?.length)
    throw serviceError(
      "invalid_argument",
      "body.volumeMounts: this service has no volumes; remove volumeMounts",
    );
  return [];
}

/** The lifecycle routes. */
export function lifecycleRoutes(
  manager: SandboxManager,
  resolveMounts: (raw: NewSandboxBody["volumeMounts"]) => ResolvedVolumeMount[] = noMounts,
): Route[] {
  const create = (alwaysSecure: boolean) => async (req: ControlRequest) => {
    const body = parseWith(newSandboxSchema, await requiredBody(req), "body");
    const volumeMounts = resolveMounts(body.volumeMounts);
    const record = await manager.create({
      template: body.templateID || DEFAULT_TEMPLATE,
      timeoutSec: positiveTimeout(body.timeout),
      secure: alwaysSecure || body.secure === true,
      allowInternetAccess: body.allow_internet_access ?? true,
      autoPause: body.autoPause ?? false,
      autoPauseMemory: autoPauseMemory(body),
      autoResume: body.autoResume?.enabled ?? false,
      metadata: body.metadata ?? {},
      envVars: body.envVars ?? {},
      volumeMounts,
      network: parseCreateNetwork(body.network),
    });
    return {
      status: 201,
      body: manager.view(record),
    };
  };

  const connect = (v2: boolean) => async (req: ControlRequest) => {
    const id = idParam(req);
    const body = v2
      ? parseWith(connectV2Schema, await optionalBody(req), "body")
      : parseWith(connectSchema, await requiredBody(req), "body");
    // Without a timeout, a running sandbox keeps its end (connect never shortens it).
    const { record, resumed } = await manager.connect(id, body.timeout ?? (v2 ? undefined : 0));
    return {
      status: resumed ? 201 : 200,
      body: manager.view(record),
    };
  };

  return [
    { method: "POST", pattern: "/sandboxes", handler: create(false) },
    { method: "POST", pattern: "/v2/sandboxes", handler: create(true) },
    {
      method: "DELETE",
      pattern: "/sandboxes/:sandboxID",
      handler: async (req) => {
        await manager.kill(idParam(req));
        return { status: 204 };
      },
    },
    {
      method: "POST",
      pattern: "/sandboxes/:sandboxID/pause",
      handler: async (req) => {
        const id = idParam(req);
        const body = parseWith(pauseSchema, await optionalBody(req), "body");
        await manager.pause(id, body.memory ?? true);
        return { status: 204 };
      },
    },
    {
      method: "POST",
      pattern: "/sandboxes/:sandboxID/resume",
      handler: async (req) => {
        const id = idParam(req);
        const body = parseWith(resumeSchema, await optionalBody(req), "body");
        const record = await manager.resume(id, positiveTimeout(body.timeout));
        return {
          status: 201,
          body: manager.view(record),
        };
      },
    },
    { method: "POST", pattern: "/sandboxes/:sandboxID/connect", handler: connect(false) },
    { method: "POST", pattern: "/v2/sandboxes/:sandboxID/connect", handler: connect(true) },
    {
      method: "POST",
      pattern: "/sandboxes/:sandboxID/timeout",
      handler: async (req) => {
        const id = idParam(req);
        // E2B takes the request without a body; the API default lifetime applies.
        const raw = await req.json();
        const timeout =
          raw === undefined ? DEFAULT_TIMEOUT_SEC : parseWith(timeoutSchema, raw, "body").timeout;
        await manager.setTimeout(id, Math.max(0, timeout));
        return { status: 204 };
      },
    },
    {
      method: "POST",
      pattern: "/sandboxes/:sandboxID/refreshes",
      handler: async (req) => {
        const id = idParam(req);
        const body = parseWith(refreshSchema, await optionalBody(req), "body");
        await manager.refresh(id, Math.max(MIN_REFRESH_SEC, body.duration ?? 0));
        return { status: 204 };
      },
    },
    ...networkRoutes(manager, idParam),
  ];
}
