/**
 * `/secrets` routes of the local service: metadata in every response, the
 * value never.
 *
 * @module
 */
import { z } from "zod";
import { serviceError, parseWith, type Route } from "../http";
import { SECRET_ID_PREFIX } from "../../../wire/ids";
import type { SecretStore } from "./store";

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  nextToken: z.string().optional(),
});

/** The secret routes. */
export function secretRoutes(store: SecretStore): Route[] {
  const id = (params: Record<string, string>): string => params.secretID ?? "";
  return [
    {
      method: "GET",
      pattern: "/secrets",
      handler: async (req) => {
        const q = parseWith(listQuery, Object.fromEntries(req.query), "query");
        const all = store.list();
        let start = 0;
        if (q.nextToken !== undefined) {
          const after = Buffer.from(q.nextToken, "base64url").toString("utf8");
          const at = all.findIndex((s) => s.secretID === after);
          if (at < 0 && !after.startsWith(SECRET_ID_PREFIX))
            throw serviceError(
              "invalid_argument",
              "query.nextToken: invalid; pass the X-Next-Token of the previous page",
            );
          // A token whose secret was deleted meanwhile restarts after the secrets created before it.
          start = at >= 0 ? at + 1 : 0;
        }
        const limit = q.limit ?? 100;
        const page = all.slice(start, start + limit);
        const headers: Record<string, string> = {};
        const last = page[page.length - 1];
        if (start + limit < all.length && last)
          headers["X-Next-Token"] = Buffer.from(last.secretID).toString("base64url");
        return { status: 200, body: page, headers };
      },
    },
    {
      method: "POST",
      pattern: "/secrets",
      handler: async (req) => ({ status: 201, body: await store.create(await req.json()) }),
    },
    {
      method: "GET",
      pattern: "/secrets/:secretID",
      handler: async (req) => ({ status: 200, body: store.get(id(req.params)) }),
    },
    {
      method: "POST",
      pattern: "/secrets/:secretID",
      handler: async (req) => ({
        status: 200,
        body: await store.update(id(req.params), await req.json()),
      }),
    },
    {
      method: "DELETE",
      pattern: "/secrets/:secretID",
      handler: async (req) => {
        await store.delete(id(req.params));
        return { status: 204 };
      },
    },
  ];
}
