/**
 * The `Template` resource's data: the inputs schema (every field described
 * with zod metadata), the outputs schema, the inferred types, and how each
 * input and output behaves on a change (read by `diffByRules` and adapters).
 * The schema of the `build` input, most of the inputs' rules, is
 * `template.build-args.ts`.
 *
 * @module
 */
import { z } from "zod";
import type { OutputRule } from "../core/descriptor";
import type { ChangeRule } from "../core/lifecycle";
import { normaliseTemplateName } from "../../wire/template-names";
import { tagSchema, templateNameSchema } from "../core/fields";
import { normaliseRunLines } from "../core/run-lines";
import { buildSchema } from "./template.build-args";

/** The zod schema of the Template inputs (validation only: no transforms, no defaults). */
export const templateArgsSchema = z.strictObject({
  name: templateNameSchema("my-team/python-tools:v1").meta({
    description:
      'The template name, [namespace/]alias[:tag]; trimmed and lower-cased by the service ("My-App" is "my-app"). Changing it replaces the template.',
  }),
  tags: z.array(tagSchema).optional().meta({
    description:
      'Tags of the built template, besides a tag in `name`; lower-cased. Default: the tag in `name`, else "default".',
  }),
  cpuCount: z
    .number()
    .int()
    .min(1, { error: "must be an integer >= 1" })
    .optional()
    .meta({ description: "vCPUs of sandboxes of this template. Default: the service's (2)." }),
  memoryMB: z
    .number()
    .int()
    .min(128, { error: "must be an integer >= 128 (MiB)" })
    .optional()
    .meta({ description: "Memory in MiB of sandboxes of this template. Default: the service's." }),
  minFreeDiskMb: z
    .number()
    .int()
    .min(0, { error: "must be an integer >= 0 (MiB)" })
    .optional()
    .meta({
      description:
        "Free disk space, in MiB, sandboxes of this template must have after the build steps. Default: the service's.",
    }),
  build: buildSchema.meta({
    description:
      "What to build: the base (fromTemplate, fromImage or a dockerfile), the steps, and the start and ready commands. A change makes a new build of the same template.",
  }),
});

/** Template inputs as a user writes them (and as `check` returns them: unchanged). */
export type TemplateArgs = z.infer<typeof templateArgsSchema>;
/** Template inputs; the same type as {@link TemplateArgs}. */
export type TemplateInputs = TemplateArgs;
/** One build step. */
export type TemplateStepInput = NonNullable<TemplateInputs["build"]["steps"]>[number];
/** A COPY step's payload. */
export type TemplateCopyInput = NonNullable<TemplateStepInput["copy"]>;

/** The outputs of the Template besides its inputs. */
export const templateOutputsSchema = z.strictObject({
  templateID: z.string().meta({ description: "The template ID; stable across rebuilds." }),
  buildID: z.string().meta({ description: "The ID of the build in use." }),
  ref: z.string().meta({
    description:
      "The template at the build in use, `<templateID>@<buildID>`: give it as a Provisioner's `template` so that a new build of this template runs the Provisioner again (and retakes its snapshot). Changes with every build; not known in a plan that rebuilds.",
  }),
  names: z
    .array(z.string())
    .meta({ description: "Every name of the template, with namespace and tag." }),
  public: z.boolean().meta({ description: "Whether the template is public." }),
  envdVersion: z.string().meta({ description: "The envd version of the build in use." }),
  buildStatus: z.string().meta({
    description: "The status of the build in use (ready after a successful create or update).",
  }),
  imageDigest: z.string().meta({
    description:
      "The digest (`sha256:…`) of the container image the build in use was made from, as the service resolved the image's tag; a new digest for the same tag shows the tag moved. Empty when the build is not from an image, or the service does not report it.",
  }),
  filesHashes: z.array(z.string()).meta({
    description:
      "The files hash of each COPY step, in step order (known at plan time); a changed local file changes it and rebuilds.",
  }),
  currentTags: z.array(z.string()).meta({
    description:
      "The tags the service holds for the build in use; differs from the desired tags after out-of-band changes.",
  }),
});

/** Outputs of the `Template` resource: every input (as given) plus what the service reports. */
export type TemplateOutputs = TemplateInputs & z.infer<typeof templateOutputsSchema>;

/**
 * How each input change is applied: a new name is a new template; new tags are
 * re-assigned; a new build or new resources is a new build of the same template.
 */
export const templateChangeRules: Record<keyof TemplateInputs, ChangeRule> = {
  name: "replace",
  tags: "update",
  cpuCount: "update",
  memoryMB: "update",
  minFreeDiskMb: "update",
  build: "update",
};

/** The inputs whose change makes a new build (the Template's `update` rebuilds on exactly these). */
export const REBUILDING_INPUTS = ["build", "cpuCount", "memoryMB", "minFreeDiskMb"] as const;

/** The registry password: a secret in every adapter (Pulumi secret, Terraform sensitive, no CDK literal). */
export const templateSensitiveInputs = ["build.fromImageRegistry.password"] as const;

/** What follows the build changes only with a new build; the ID stays across rebuilds. */
const withBuild: OutputRule = { recomputedWith: REBUILDING_INPUTS };

/** The ID stays across rebuilds; the build's outputs change with a new build, names and tags with any update. */
export const templateOutputRules: Record<keyof z.infer<typeof templateOutputsSchema>, OutputRule> =
  {
    templateID: "stable",
    public: "stable",
    buildID: withBuild,
    ref: withBuild,
    names: "recomputed",
    envdVersion: withBuild,
    buildStatus: withBuild,
    imageDigest: withBuild,
    filesHashes: withBuild,
    currentTags: "recomputed",
  };

/**
 * The inputs as the service will use them: name and tags trimmed and
 * lower-cased, no steps when none are given, a list `run` joined into the
 * line it means. Used by diff, create and
 * update, never by check, so plans compare what the user wrote.
 */
export function normaliseTemplateInputs(inputs: TemplateInputs): TemplateInputs {
  // Values not known yet (preview) are left as they are, whatever their type.
  const normal: TemplateInputs = { ...inputs };
  if (typeof inputs.name === "string") normal.name = normaliseTemplateName(inputs.name);
  if (Array.isArray(inputs.tags))
    normal.tags = inputs.tags.map((t) => (typeof t === "string" ? normaliseTemplateName(t) : t));
  if (inputs.build !== null && typeof inputs.build === "object")
    normal.build = { ...inputs.build, steps: (inputs.build.steps ?? []).map(normaliseStep) };
  return normal;
}

/** A step with its `run` as the one line it means (a list joined as the SDK does). */
function normaliseStep(step: TemplateStepInput): TemplateStepInput {
  if (step === null || typeof step !== "object" || step.run === undefined) return step;
  return { ...step, run: normaliseRunLines(step.run) as TemplateStepInput["run"] };
}
