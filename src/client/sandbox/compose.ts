/**
 * `POST /files/compose`: concatenate files inside the sandbox (used to
 * assemble a large upload sent in parts). The sources are deleted afterwards.
 * Reference: docs/envd.md#http-routes and docs/envd.md#files-and-compose.
 *
 * @module
 */
import { invalidArgument } from "../../errors";
import { CONTENT_TYPES, ENVD_ROUTES } from "../../wire/envd";
import { COMPOSE_FIELDS, HTTP_HEADERS, OPS } from "./constants";
import { effectiveUser, type SandboxContext } from "./context";
import type { WrittenFile } from "./transfer-options";
import { httpRequest, readJson } from "./http";
import { checkPath, checkTimeoutMs, checkUser } from "./validate";

/** Options of {@link ComposeApi.compose}. */
export interface ComposeOptions {
  /** Owner of the result and base of relative paths. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** Aborts the call. @default none */
  signal?: AbortSignal | undefined;
  /** Deadline in milliseconds; 0 means none. @default the client's timeoutMs */
  timeoutMs?: number | undefined;
}

/** The compose part of the sandbox client. */
export interface ComposeApi {
  /**
   * Concatenates `sourcePaths` in order into `destination` (replacing it), then
   * deletes the sources. Not retried: the sources are gone after a success.
   */
  compose(
    sourcePaths: string[],
    destination: string,
    options?: ComposeOptions,
  ): Promise<WrittenFile>;
}

/** Builds the compose part over a shared context. */
export function createComposeApi(ctx: SandboxContext): ComposeApi {
  return {
    async compose(sourcePaths, destination, options = {}) {
      const op = OPS.filesCompose;
      if (!Array.isArray(sourcePaths) || sourcePaths.length === 0) {
        throw invalidArgument(op, "sourcePaths", sourcePaths, "a non-empty array of paths");
      }
      sourcePaths.forEach((p, i) => checkPath(op, `sourcePaths[${i}]`, p));
      checkPath(op, "destination", destination);
      if (sourcePaths.includes(destination)) {
        throw invalidArgument(
          op,
          "destination",
          destination,
          "a path that is not one of the sources",
        );
      }
      const user = effectiveUser(ctx, checkUser(op, options.user));
      const body: Record<string, unknown> = {
        [COMPOSE_FIELDS.sourcePaths]: sourcePaths,
        [COMPOSE_FIELDS.destination]: destination,
      };
      if (user) body[COMPOSE_FIELDS.username] = user;
      const scope = { operation: op, sandboxID: ctx.sandboxID, resourceId: destination };
      const res = await httpRequest(ctx, {
        method: "POST",
        route: ENVD_ROUTES.compose,
        headers: { [HTTP_HEADERS.contentType]: CONTENT_TYPES.json },
        body: JSON.stringify(body),
        signal: options.signal,
        timeoutMs: checkTimeoutMs(op, options.timeoutMs) ?? ctx.timeoutMs,
        scope,
      });
      const entry = await readJson<WrittenFile>(res, scope);
      return { path: entry.path, name: entry.name, type: entry.type };
    },
  };
}
