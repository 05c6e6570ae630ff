/**
 * The schema of the Template's `build` input: the base (exactly one of
 * fromTemplate, fromImage, dockerfile, with a registry's credentials), the
 * steps (RUN, COPY, ENV, WORKDIR, USER, each checked to be one kind), and the
 * start and ready commands. Its own file because it is most of the inputs'
 * schema and all of its either-or rules; `template.args.ts` puts it beside
 * the other inputs and holds the outputs and change rules.
 *
 * @module
 */
import { z } from "zod";
import { runLinesSchema } from "../core/run-lines";
import { dockerfileProblem } from "./template.dockerfile-check";

const nonEmpty = (what: string) => z.string().min(1, { error: `must be a non-empty ${what}` });

/** File mode of a COPY: a number (`0o755`) or octal digits (`"755"`, `"0755"`). */
const modeSchema = z.union(
  [z.number().int().min(0).max(0o7777), z.string().regex(/^[0-7]{3,4}$/)],
  { error: 'must be a file mode: a number up to 0o7777 or octal digits like "0755"' },
);

const copySchema = z
  .strictObject({
    src: nonEmpty("local path").optional().meta({
      description:
        "A local file or directory to copy into the template, or a glob pattern (`app/*.py`): relative to the build context (`build.context`, else the Pulumi program or Terraform module directory), or absolute. The context's `.dockerignore` applies. Exactly one of src, sources.",
    }),
    sources: z
      .array(nonEmpty("local path"))
      .min(1, { error: "must list at least one source" })
      .optional()
      .meta({
        description:
          "Several sources (paths or globs, as `src`) copied to the same `dest`: one COPY each, as the SDK's `copy([...])`. Exactly one of src, sources.",
      }),
    dest: nonEmpty("path").meta({ description: "Destination path in the template." }),
    user: z
      .string()
      .optional()
      .meta({ description: "Owner of the copied files. Default: the build's current user." }),
    mode: modeSchema.optional().meta({
      description:
        'Mode of the copied files: a number (0o755) or octal digits ("0755"). Default: the local files\' modes.',
    }),
  })
  .superRefine((copy, ctx) => {
    if ((copy.src === undefined) === (copy.sources === undefined))
      ctx.addIssue({
        code: "custom",
        message: `must set exactly one of src or sources (found ${copy.src === undefined ? "neither" : "both"})`,
      });
  });

const STEP_KINDS = ["run", "copy", "env", "workdir"] as const;

/**
 * One build step. Exactly one of `run`, `copy`, `env`, `workdir`; or `user`
 * alone (a USER step). `user` beside `run` runs that command as that user.
 */
const stepSchema = z
  .strictObject({
    run: runLinesSchema().optional().meta({
      description:
        'RUN: a shell line, or a list of lines run as one line joined with " && " (as the SDK\'s runCmd). Changing one form for the other with the same joined line does not rebuild. Terraform (HCL) takes the list form.',
      // Terraform refuses a dynamic attribute's list form in a list of
      // objects where other elements lack it (a COPY step beside a RUN).
      terraformListForm: true,
    }),
    user: nonEmpty("user name").optional().meta({
      description:
        "With `run`: the user to run that command as. Alone: a USER step changing the current user for the following steps.",
    }),
    copy: copySchema
      .optional()
      .meta({ description: "COPY: local files into the template (their content is hashed)." }),
    env: z
      .record(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be an environment variable name" }),
        z.string(),
      )
      .optional()
      .meta({
        description:
          "ENV: environment variables set for the following steps and for sandboxes of the template.",
      }),
    workdir: nonEmpty("path").optional().meta({
      description:
        "WORKDIR: the working directory of the following steps and of sandboxes of the template.",
    }),
    force: z.boolean().optional().meta({
      description:
        "Rebuild this step (and so every step after it) even when the service has it cached, as the SDK's `skipCache()` before a step. Default: false.",
    }),
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
  })
  .meta({
    description:
      "One build step: exactly one of run, copy, env, workdir; or user alone (a USER step).",
  });

/** Credentials of a private registry (the SDK's `fromImage(ref, { username, password })`). */
const registrySchema = z.strictObject({
  username: nonEmpty("user name").meta({ description: "The registry user name." }),
  password: nonEmpty("password").meta({
    description:
      "The registry password or token; a secret (Pulumi secret, Terraform sensitive: pass a sensitive variable).",
  }),
});

/** The bases a build can start from; exactly one is given. */
const BASES = ["fromTemplate", "fromImage", "dockerfile"] as const;

/** The `build` input: the base, the steps, and the start and ready commands. */
export const buildSchema = z
  .strictObject({
    fromTemplate: nonEmpty("template name or ID").optional().meta({
      description:
        "The template (name or ID) to build on. Exactly one of fromTemplate, fromImage, dockerfile.",
    }),
    fromImage: nonEmpty("image reference").optional().meta({
      description:
        "A container image to build from (`python:3.12`, `registry.example.com/team/app:v1`). Exactly one of fromTemplate, fromImage, dockerfile.",
    }),
    fromImageRegistry: registrySchema.optional().meta({
      description:
        "Credentials for the registry of fromImage (or of the Dockerfile's FROM). Default: anonymous, or the service's own registry login.",
    }),
    dockerfile: nonEmpty("Dockerfile content").optional().meta({
      description:
        'The content of a Dockerfile (Terraform: `file("Dockerfile")`), turned into the build exactly as the SDK\'s `fromDockerfile` does: FROM is the image, RUN/COPY/ADD/ENV/ARG/WORKDIR/USER are steps, CMD/ENTRYPOINT the start command. Exactly one of fromTemplate, fromImage, dockerfile; `steps` run after it.',
    }),
    context: nonEmpty("directory").optional().meta({
      description:
        "The directory COPY sources are read from (the Dockerfile's build context; its `.dockerignore` applies): relative to the Pulumi program or Terraform module directory, or absolute. Default: that directory.",
    }),
    steps: z
      .array(stepSchema)
      .optional()
      .meta({ description: "The build steps, in order. Default: no steps." }),
    startCmd: z.string().optional().meta({
      description: "Command started in every sandbox of the template. Default: none.",
    }),
    readyCmd: z.string().optional().meta({
      description: "Command that must succeed before a sandbox counts as ready. Default: none.",
    }),
    skipCache: z.boolean().optional().meta({
      description:
        "Rebuild every step without the service's step cache (uploaded files are still reused), as `Template.build(t, { skipCache: true })`. Default: false.",
    }),
  })
  .superRefine((build, ctx) => {
    const given = BASES.filter((k) => build[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `must set exactly one of fromTemplate, fromImage or dockerfile (found ${given.length === 0 ? "none" : given.join(", ")}): e.g. fromTemplate "base", or fromImage "python:3.12"`,
      });
    }
    if (build.fromImageRegistry !== undefined && build.fromTemplate !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["fromImageRegistry"],
        message:
          "goes with fromImage or dockerfile (a registry to pull from), not with fromTemplate: remove it",
      });
    }
    if (typeof build.dockerfile === "string") {
      const problem = dockerfileProblem(build.dockerfile);
      if (problem) ctx.addIssue({ code: "custom", path: ["dockerfile"], message: problem });
    }
  });
