/**
 * Template tags: assign, delete, list.
 *
 * @module
 */

import { z } from "zod";
import { AssignTagsArgs, checkId, DeleteTagsArgs } from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import { AssignedTemplateTagsSchema, TemplateTagSchema } from "./template.schemas";
import type { AssignedTemplateTags, TemplateTag } from "./types";
import { parseArgs } from "./validate";

/** Tag methods of the control client. */
export interface TagMethods {
  /** `POST /templates/tags` (201): tags the build named by `target` (`name:tag`). Never retried. */
  assignTemplateTags(
    body: { target: string; tags: string[] },
    options?: CallOptions,
  ): Promise<AssignedTemplateTags>;
  /** `DELETE /templates/tags` (204), a DELETE with a JSON body; `name` has no tag. */
  deleteTemplateTags(body: { name: string; tags: string[] }, options?: CallOptions): Promise<void>;
  /** `GET /templates/{templateID}/tags`. */
  listTemplateTags(templateID: string, options?: CallOptions): Promise<TemplateTag[]>;
}

/** Builds the {@link TagMethods} over `ctx`. */
export function tagMethods(ctx: CallContext): TagMethods {
  return {
    async assignTemplateTags(body, options) {
      const parsed = parseArgs(AssignTagsArgs, body, "tags.assign");
      const spec = callSpec("tags.assign", [201], AssignedTemplateTagsSchema, parsed.target);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/templates/tags", { body: parsed, ...init }),
      );
      return data;
    },

    async deleteTemplateTags(body, options) {
      const parsed = parseArgs(DeleteTagsArgs, body, "tags.delete");
      const spec = callSpec("tags.delete", [204], undefined, parsed.name);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/templates/tags", { body: parsed, ...init }),
      );
    },

    async listTemplateTags(templateID, options) {
      const id = checkId("tags.list", "templateID", templateID);
      const spec = callSpec("tags.list", [200], z.array(TemplateTagSchema), id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/templates/{templateID}/tags", {
          params: { path: { templateID: id } },
          ...init,
        }),
      );
      return data;
    },
  };
}
