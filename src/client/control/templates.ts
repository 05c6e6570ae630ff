/**
 * Templates: request a build (v3), the file-hash upload link, list, get,
 * update, delete and alias lookup. Reference: docs/control-api.md#template-endpoints.
 *
 * @module
 */

import { z } from "zod";
import { checkId, FilesHash, PageQueryArgs, TemplateUpdateArgs, TemplateV3Args } from "./args";
import { type CallContext, type CallOptions, callSpec, discardBody, invoke } from "./call";
import { nextTokenOf, paginate } from "./pagination";
import {
  TemplateAliasResponseSchema,
  TemplateBuildFileUploadSchema,
  TemplateRequestResponseV3Schema,
  TemplateSchema,
  TemplateUpdateResponseSchema,
  TemplateWithBuildsSchema,
} from "./template.schemas";
import type {
  Page,
  Template,
  TemplateAliasResponse,
  TemplateBuildFileUpload,
  TemplateBuildRequestV3,
  TemplateRequestResponseV3,
  TemplateUpdateResponse,
  TemplateWithBuilds,
} from "./types";
import { parseArgs } from "./validate";

/** Paging of the template lists. */
export interface TemplatePageQuery {
  /**
   * The cursor to start from.
   * @default the first page
   */
  nextToken?: string | undefined;
  /**
   * Page size, 1..100.
   * @default 100
   */
  limit?: number | undefined;
}

/** A template with one page of its builds. */
export interface TemplateWithBuildsPage {
  template: TemplateWithBuilds;
  /** The cursor of the next page of builds; undefined on the last page. */
  nextToken: string | undefined;
}

/** Template methods of the control client. */
export interface TemplateMethods {
  /** `POST /v3/templates` (202): a template ID (reused for a name the team owns) and a build ID. Never retried. */
  createTemplateV3(
    body: TemplateBuildRequestV3,
    options?: CallOptions,
  ): Promise<TemplateRequestResponseV3>;
  /**
   * `GET /templates/{templateID}/files/{hash}` (201): whether a COPY step's files
   * are cached, else the `url` to PUT their tar archive to.
   */
  getTemplateFilesUploadLink(
    templateID: string,
    hash: string,
    options?: CallOptions,
  ): Promise<TemplateBuildFileUpload>;
  /** `GET /templates` (deprecated): every template. */
  listTemplates(query?: { teamID?: string }, options?: CallOptions): Promise<Template[]>;
  /** One page of `GET /v2/templates`. */
  listTemplatesV2Page(query?: TemplatePageQuery, options?: CallOptions): Promise<Page<Template>>;
  /** Every template of `GET /v2/templates`, page after page. */
  listTemplatesV2(query?: TemplatePageQuery, options?: CallOptions): AsyncIterable<Template>;
  /** `GET /templates/{templateID}`: the template and one page of its builds. */
  getTemplate(
    templateID: string,
    query?: TemplatePageQuery,
    options?: CallOptions,
  ): Promise<TemplateWithBuildsPage>;
  /** `DELETE /templates/{templateID}` (204); also deletes snapshots by their snapshotID. */
  deleteTemplate(templateID: string, options?: CallOptions): Promise<void>;
  /** `PATCH /templates/{templateID}` (deprecated; 200 without body). */
  updateTemplate(
    templateID: string,
    body: { public?: boolean },
    options?: CallOptions,
  ): Promise<void>;
  /** `PATCH /v2/templates/{templateID}`: returns the template's names. */
  updateTemplateV2(
    templateID: string,
    body: { public?: boolean },
    options?: CallOptions,
  ): Promise<TemplateUpdateResponse>;
  /**
   * `GET /templates/aliases/{alias}` with `[namespace/]name[:tag]`. Fails with
   * `not_found` when absent and `permission_denied` when it belongs to another team.
   */
  getTemplateByAlias(alias: string, options?: CallOptions): Promise<TemplateAliasResponse>;
}

/** Builds the {@link TemplateMethods} over `ctx`. */
export function templateMethods(ctx: CallContext): TemplateMethods {
  const listPage = async (
    query: TemplatePageQuery | undefined,
    options?: CallOptions,
  ): Promise<Page<Template>> => {
    const q = parseArgs(PageQueryArgs, query ?? {}, "templates.listV2");
    const spec = callSpec("templates.listV2", [200], z.array(TemplateSchema));
    const { data, response } = await invoke(ctx, spec, options, (init) =>
      ctx.api.GET("/v2/templates", { params: { query: q }, ...init }),
    );
    return { items: data, nextToken: nextTokenOf(response) };
  };

  return {
    async createTemplateV3(body, options) {
      const parsed = parseArgs(
        TemplateV3Args,
        body,
        "templates.createV3",
      ) as TemplateBuildRequestV3;
      const spec = callSpec("templates.createV3", [202], TemplateRequestResponseV3Schema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/v3/templates", { body: parsed, ...init }),
      );
      return data;
    },

    async getTemplateFilesUploadLink(templateID, hash, options) {
      const id = checkId("templates.filesUploadLink", "templateID", templateID);
      const { hash: h } = parseArgs(
        z.object({ hash: FilesHash }),
        { hash },
        "templates.filesUploadLink",
      );
      const spec = callSpec("templates.filesUploadLink", [201], TemplateBuildFileUploadSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/{templateID}/files/{hash}", {
          params: { path: { templateID: id, hash: h } },
          ...init,
        }),
      );
      return data;
    },

    async listTemplates(query, options) {
      const q = parseArgs(
        z.object({ teamID: z.string().min(1).optional() }),
        query ?? {},
        "templates.list",
      );
      const spec = callSpec("templates.list", [200], z.array(TemplateSchema));
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates", { params: { query: q }, ...init }),
      );
      return data;
    },

    listTemplatesV2Page: listPage,

    listTemplatesV2(query, options) {
      return paginate(
        "templates.listV2",
        (nextToken) => listPage({ ...query, nextToken }, options),
        query?.nextToken,
      );
    },

    async getTemplate(templateID, query, options) {
      const id = checkId("templates.get", "templateID", templateID);
      const q = parseArgs(PageQueryArgs, query ?? {}, "templates.get");
      const spec = callSpec("templates.get", [200], TemplateWithBuildsSchema, id);
      const { data, response } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/{templateID}", {
          params: { path: { templateID: id }, query: q },
          ...init,
        }),
      );
      return { template: data, nextToken: nextTokenOf(response) };
    },

    async deleteTemplate(templateID, options) {
      const id = checkId("templates.delete", "templateID", templateID);
      const spec = callSpec("templates.delete", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/templates/{templateID}", {
          params: { path: { templateID: id } },
          ...init,
        }),
      );
    },

    async updateTemplate(templateID, body, options) {
      const id = checkId("templates.update", "templateID", templateID);
      const parsed = parseArgs(TemplateUpdateArgs, body, "templates.update");
      const spec = callSpec("templates.update", [200], undefined, id);
      await invoke(ctx, spec, options, async (init) => {
        const result = await ctx.api.PATCH("/templates/{templateID}", {
          params: { path: { templateID: id } },
          body: parsed,
          // The v1 answer has no body; never try to parse one.
          parseAs: "stream",
          ...init,
        });
        await discardBody(result.response);
        return result;
      });
    },

    async updateTemplateV2(templateID, body, options) {
      const id = checkId("templates.updateV2", "templateID", templateID);
      const parsed = parseArgs(TemplateUpdateArgs, body, "templates.updateV2");
      const spec = callSpec("templates.updateV2", [200], TemplateUpdateResponseSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.PATCH("/v2/templates/{templateID}", {
          params: { path: { templateID: id } },
          body: parsed,
          ...init,
        }),
      );
      return data;
    },

    async getTemplateByAlias(alias, options) {
      const name = checkId("templates.getByAlias", "alias", alias);
      const spec = callSpec("templates.getByAlias", [200], TemplateAliasResponseSchema, name);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/aliases/{alias}", { params: { path: { alias: name } }, ...init }),
      );
      return data;
    },
  };
}
