/**
 * Inputs of the `Template` resource: the zod schema, the inferred types, the
 * field docs and the change rules (as data, read by `diffByRules`).
 *
 * @module
 */
import { z } from "zod";
import type { ChangeRule } from "../core/lifecycle";
import { nameProblem, normaliseName, tagProblem } from "./template.names";

const nonEmpty = (what: string) => z.string().min(1, { error: `must be a non-empty ${what}` });

const templateNameSchema = z
  .string({ error: "must be a string [namespace/]alias[:tag]" })
  .transform(normaliseName)
  .superRefine((name, ctx) => {
    const problem = nameProblem(name);
    if (problem)
      ctx.addIssue({ code: "custom", message: `${problem}: e.g. "my-team/python-tools:v1"` });
  });

const tagSchema = z
  .string({ error: "must be a string" })
  .transform(normaliseName)
  .superRefine((tag, ctx) => {
    const problem = tagProblem(tag);
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}: e.g. "v1" or "latest"` });
  });

/** File mode of a COPY: a number (`0o755`) or octal digits (`"755"`, `"0755"`). */
const modeSchema = z.union(
  [z.number().int().min(0).max(0o7777), z.string().regex(/^[0-7]{3,4}$/)],
  { error: 'must be a file mode: a number up to 0o7777 or octal digits like "0755"' },
);

const copySchema = z.strictObject({
  /** A local file or directory: relative to the program directory, or absolute. */
  src: nonEmpty("local path"),
  /** Destination path in the template. */
  dest: nonEmpty("path"),
  /** Owner of the copied files. @default the build's current user */
  user: z.string().optional(),
  /** Mode of the copied files. @default the local files' modes */
  mode: modeSchema.optional(),
});

const STEP_KINDS = ["run", "copy", "env", "workdir"] as const;

/**
 * One build step. Exactly one of `run`, `copy`, `env`, `workdir`; or `user`
 * alone (a USER step). `user` beside `run` runs that command as that user.
 */
const stepSchema = z
  .strictObject({
    /** RUN: a shell command, or several joined with `&&`. */
    run: z.union([nonEmpty("command"), z.array(nonEmpty("command")).min(1)]).optional(),
    /** With `run`: the user to run as. Alone: a USER step changing the current user. */
    user: nonEmpty("user name").optional(),
    /** COPY: local files into the template. */
    copy: copySchema.optional(),
    /** ENV: environment variables set for the following steps and the sandboxes. */
    env: z
      .record(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be an environment variable name" }),
        z.string(),
      )
      .optional(),
    /** WORKDIR: the working directory of the following steps and the sandboxes. */
    workdir: nonEmpty("path").optional(),
  })
  .superRefine((step, ctx) => {
    const kinds = STEP_KINDS.filter((k) => step[k] !== undefined);
    if (kinds.length === 0 && step.user === undefined) {
      ctx.addIssue({ code: "custom", message: "must hold one of run, copy, env, workdir or user" });
    } else if (kinds.length > 1) {
      ctx.addIssue({
        code: "custom",
        message: `must hold only one of run, copy, env, workdir (found ${kinds.join(", ")}): split it into several steps`,
      });
    } else if (step.user !== undefined && kinds.length === 1 && kinds[0] !== "run") {
      ctx.addIssue({
        code: "custom",
        message: `user goes with run or alone, not with ${kinds[0]}: use a separate { user } step`,
      });
    }
  });

const buildSchema = z
  .strictObject({
    /** The template (name or ID) to build on. Exclusive with `fromImage`. */
    fromTemplate: nonEmpty("template name or ID").optional(),
    /** A container image to build from. Exclusive with `fromTemplate`. (The local service cannot pull images.) */
    fromImage: nonEmpty("image reference").optional(),
    /** The steps, in order. @default no steps */
    steps: z.array(stepSchema).default([]),
    /** Command started in every sandbox of the template. @default none */
    startCmd: z.string().optional(),
    /** Command that must succeed before a sandbox counts as ready. @default none */
    readyCmd: z.string().optional(),
  })
  .superRefine((build, ctx) => {
    const given = [build.fromTemplate, build.fromImage].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `must set exactly one of fromTemplate or fromImage (found ${given}): e.g. { fromTemplate: "base" }`,
      });
    }
  });

/** The zod schema of the Template inputs. */
export const templateArgsSchema = z.strictObject({
  /** The template name, `[namespace/]alias[:tag]`; changing it replaces the template. */
  name: templateNameSchema,
  /** Tags of the built template (besides a tag in `name`). @default the tag in `name`, else `default` */
  tags: z.array(tagSchema).optional(),
  /** vCPUs of sandboxes of this template. @default the service's default (2) */
  cpuCount: z.number().int().min(1, { error: "must be an integer >= 1" }).optional(),
  /** Memory in MiB of sandboxes of this template. @default the service's default */
  memoryMB: z.number().int().min(128, { error: "must be an integer >= 128 (MiB)" }).optional(),
  /** What to build: the base and the steps. */
  build: buildSchema,
});

/** Template inputs after `check` (normalised). */
export type TemplateInputs = z.output<typeof templateArgsSchema>;
/** Template inputs as a user writes them. */
export type TemplateArgs = z.input<typeof templateArgsSchema>;
/** One build step, normalised. */
export type TemplateStepInput = TemplateInputs["build"]["steps"][number];
/** A COPY step's payload. */
export type TemplateCopyInput = NonNullable<TemplateStepInput["copy"]>;

/** Outputs of the `Template` resource: every input plus what the service reports. */
export interface TemplateOutputs extends TemplateInputs {
  /** The template ID; stable across rebuilds. */
  templateID: string;
  /** The ID of the build in use. */
  buildID: string;
  /** Every name of the template (with namespace and tag). */
  names: string[];
  /** Whether the template is public. */
  public: boolean;
  /** The envd version of the built template. */
  envdVersion: string;
  /** The status of the build in use (`ready` after a successful create or update). */
  buildStatus: string;
  /** The files hash of each COPY step, in step order; a changed local file changes it and rebuilds. */
  filesHashes: string[];
  /** The tags the service reports for the build in use; differs from the desired tags after out-of-band changes. */
  currentTags: string[];
}

/**
 * How each input change is applied: a new name is a new template; new tags are
 * re-assigned; a new build or new resources is a new build of the same template.
 */
export const templateChangeRules: Record<keyof TemplateInputs, ChangeRule> = {
  name: "replace",
  tags: "update",
  cpuCount: "update",
  memoryMB: "update",
  build: "update",
};
