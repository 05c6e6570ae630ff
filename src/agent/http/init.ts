/**
 * `POST /init` and `GET /envs` (docs/envd.md#http-routes): the control service
 * configures the agent; `/init` may come again after a resume.
 *
 * @module
 */
import { registerSecret } from "../../errors";
import { ENVD_HEADERS, ENVD_VERSION } from "../../wire/envd";
import { globalEnv } from "../state";
import { HttpError, readJson, sendJson } from "./respond";
import type { RouteContext } from "./route-context";

interface InitBody {
  envVars?: unknown;
  accessToken?: unknown;
  defaultUser?: unknown;
  defaultWorkdir?: unknown;
}

function stringMap(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new HttpError(400, "envVars must be an object of strings");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new HttpError(400, `envVars.${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/** Serves `POST /init`. */
export async function init(ctx: RouteContext): Promise<void> {
  const body = (await readJson(ctx.req)) as InitBody;
  if (typeof body !== "object" || body === null)
    throw new HttpError(400, "init body must be a JSON object");
  const settings = ctx.state.settings;
  const newToken =
    typeof body.accessToken === "string" && body.accessToken !== "" ? body.accessToken : undefined;
  if (settings.accessToken !== undefined) {
    // Loaded here: it brings node:crypto, which a fresh agent's first /init (no token yet, on
    // every sandbox start's path) does not need (boot-handler.ts).
    const { tokenMatches } = await import("../auth");
    // Re-init must prove it knows the current token, in the header or the body.
    const header = ctx.req.headers[ENVD_HEADERS.accessToken.toLowerCase()];
    const given = typeof header === "string" ? header : undefined;
    if (
      !tokenMatches(settings.accessToken, given) &&
      !tokenMatches(settings.accessToken, newToken)
    ) {
      throw new HttpError(
        401,
        "access token mismatch: re-init must carry the current access token",
      );
    }
  }
  const envVars = stringMap(body.envVars);
  settings.envVars = envVars;
  if ("accessToken" in body) {
    settings.accessToken = newToken;
    // The agent's logs redact it by value.
    registerSecret(newToken);
  }
  if (typeof body.defaultUser === "string" && body.defaultUser !== "")
    settings.defaultUser = body.defaultUser;
  if (typeof body.defaultWorkdir === "string")
    settings.defaultWorkdir = body.defaultWorkdir || undefined;
  ctx.res.writeHead(204, { [ENVD_HEADERS.envdVersion]: ENVD_VERSION });
  ctx.res.end();
}

/** Serves `GET /envs`. */
export async function envs(ctx: RouteContext): Promise<void> {
  sendJson(ctx.res, 200, globalEnv(ctx.state));
}
