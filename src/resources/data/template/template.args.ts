/**
 * The `template` data source's data: a template by name or ID, and what the
 * service reports about it and its build.
 *
 * @module
 */
import { z } from "zod";
import { templateNameSchema } from "../../core/fields";

/** The arguments of the `template` data source: exactly one of `name` and `templateID`. */
export const templateDataArgsSchema = z
  .strictObject({
    name: templateNameSchema("my-tools:v1").optional().meta({
      description:
        'The template\'s name, [namespace/]alias[:tag]; the tag picks the build (default: "default"). Exactly one of name, templateID.',
    }),
    templateID: z
      .string({ error: "must be a template ID string" })
      .min(1, { error: "must be a non-empty template ID" })
      .optional()
      .meta({
        description: "The template's ID. Exactly one of name, templateID.",
      }),
  })
  .superRefine((args, ctx) => {
    if ((args.name === undefined) === (args.templateID === undefined)) {
      ctx.addIssue({
        code: "custom",
        message:
          'must set exactly one of name or templateID: e.g. name "my-tools", or templateID "abc123"',
      });
    }
  });

/** What the `template` data source returns. */
export const templateDataResultSchema = z.strictObject({
  templateID: z.string().meta({ description: "The template ID." }),
  names: z
    .array(z.string())
    .meta({ description: "Every name of the template, with namespace and tag." }),
  public: z.boolean().meta({ description: "Whether the template is public." }),
  buildID: z.string().meta({
    description:
      "The build the tag (in name, else default) points to; else the newest ready build.",
  }),
  buildStatus: z.string().meta({ description: "The status of that build." }),
  envdVersion: z.string().meta({ description: "The envd version of that build." }),
  cpuCount: z.number().meta({ description: "vCPUs of sandboxes of that build." }),
  memoryMB: z.number().meta({ description: "Memory in MiB of sandboxes of that build." }),
  tags: z.array(z.string()).meta({ description: "The tags pointing to that build, sorted." }),
});

/** The `template` data source's arguments. */
export type TemplateDataArgs = z.infer<typeof templateDataArgsSchema>;
/** What the `template` data source returns. */
export type TemplateDataResult = z.infer<typeof templateDataResultSchema>;
