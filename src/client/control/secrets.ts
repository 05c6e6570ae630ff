/**
 * Secrets: named values the service stores and never answers back. The
 * value is an argument only; no error raised here ever quotes it.
 *
 * @module
 */
import { z } from "zod";
import { hasSecretIDPrefix, SECRET_ID_PREFIX, SECRET_NAME_PATTERN } from "../../wire/ids";
import { invalidArgument } from "../../errors";
import { checkId } from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import { nextTokenOf, paginate } from "./pagination";
import type { Page } from "./types";
import { parseArgs } from "./validate";
import { type SecretInfo, SecretSchema } from "./volume.schemas";

/** Metadata of a secret (at most 32 string entries). */
export type SecretMetadata = Record<string, string>;

/** Secret methods of the control client. */
export interface SecretMethods {
  /** `POST /secrets` (201): metadata only. Never retried. */
  createSecret(
    name: string,
    value: string,
    metadata?: SecretMetadata,
    options?: CallOptions,
  ): Promise<SecretInfo>;
  /** `POST /secrets/{secretID}`: stores a new version of the value. Never retried. */
  updateSecret(
    idOrName: string,
    value: string,
    metadata?: SecretMetadata,
    options?: CallOptions,
  ): Promise<SecretInfo>;
  /** `GET /secrets/{secretID}` by id or name. */
  getSecret(idOrName: string, options?: CallOptions): Promise<SecretInfo>;
  /** One page of `GET /secrets`. */
  listSecretsPage(
    query?: { nextToken?: string; limit?: number },
    options?: CallOptions,
  ): Promise<Page<SecretInfo>>;
  /** Every secret, page after page. */
  listSecrets(options?: CallOptions): AsyncIterable<SecretInfo>;
  /** `DELETE /secrets/{secretID}` (204). */
  deleteSecret(idOrName: string, options?: CallOptions): Promise<void>;
}

const Name = z.object({
  name: z
    .string()
    .regex(SECRET_NAME_PATTERN)
    .refine((n) => !hasSecretIDPrefix(n), `a name not starting with '${SECRET_ID_PREFIX}'`),
});
const Metadata = z.object({ metadata: z.record(z.string(), z.string().max(1024)).optional() });
const ListQuery = z.object({
  nextToken: z.string().min(1).optional(),
  limit: z.int().min(1).max(100).optional(),
});

/** Checks the value without ever showing it. */
function checkValue(operation: string, value: unknown): string {
  if (typeof value !== "string")
    throw invalidArgument(operation, "value", typeof value, "a string (the secret's value)");
  return value;
}

/** Builds the {@link SecretMethods} over `ctx`. */
export function secretMethods(ctx: CallContext): SecretMethods {
  const listPage = async (
    query: { nextToken?: string | undefined; limit?: number | undefined } | undefined,
    options?: CallOptions,
  ): Promise<Page<SecretInfo>> => {
    const q = parseArgs(ListQuery, query ?? {}, "secrets.list");
    const spec = callSpec("secrets.list", [200], z.array(SecretSchema));
    const { data, response } = await invoke(ctx, spec, options, (init) =>
      ctx.api.GET("/secrets", { params: { query: q }, ...init }),
    );
    return { items: data, nextToken: nextTokenOf(response) };
  };
  return {
    async createSecret(name, value, metadata, options) {
      const op = "secrets.create";
      const n = parseArgs(Name, { name }, op).name;
      const body = {
        name: n,
        value: checkValue(op, value),
        ...parseArgs(Metadata, { metadata }, op),
      };
      const spec = callSpec(op, [201], SecretSchema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/secrets", { body, ...init }),
      );
      return data;
    },
    async updateSecret(idOrName, value, metadata, options) {
      const op = "secrets.update";
      const id = checkId(op, "secretID", idOrName);
      const body = { value: checkValue(op, value), ...parseArgs(Metadata, { metadata }, op) };
      const spec = callSpec(op, [200], SecretSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/secrets/{secretID}", { params: { path: { secretID: id } }, body, ...init }),
      );
      return data;
    },
    async getSecret(idOrName, options) {
      const id = checkId("secrets.get", "secretID", idOrName);
      const spec = callSpec("secrets.get", [200], SecretSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/secrets/{secretID}", { params: { path: { secretID: id } }, ...init }),
      );
      return data;
    },
    listSecretsPage: listPage,
    listSecrets(options) {
      return paginate("secrets.list", (nextToken) => listPage({ nextToken }, options), undefined);
    },
    async deleteSecret(idOrName, options) {
      const id = checkId("secrets.delete", "secretID", idOrName);
      const spec = callSpec("secrets.delete", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/secrets/{secretID}", { params: { path: { secretID: id } }, ...init }),
      );
    },
  };
}
