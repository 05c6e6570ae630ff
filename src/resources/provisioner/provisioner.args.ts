/**
 * The Provisioner's data: the files to put into a sandbox, the setup commands
 * to run there, what to do with the sandbox afterwards (inputs, strict: an
 * unknown key is an error naming it), what a run produces (outputs), and how
 * each input and output behaves on a change.
 *
 * @module
 */
import { z } from "zod";
import type { OutputRule } from "../core/descriptor";
import { sandboxIDSchema, templateNameSchema } from "../core/fields";
import type { ChangeRule } from "../core/lifecycle";
import { runLinesSchema } from "../core/run-lines";
import { provisionerNetworkSchema } from "./network";

const sandboxPath = z
  .string()
  .min(1, "must be a non-empty path inside the sandbox")
  .refine((p) => !p.includes("\0"), "must not contain NUL bytes");

/** One file or directory to upload. */
const fileSpecSchema = z.strictObject({
  source: z.string().min(1, "must be a local file or directory path").meta({
    description:
      "A local file or directory: absolute, or relative to the base directory (the Pulumi program or Terraform module directory).",
  }),
  destination: sandboxPath.meta({
    description:
      "Where it goes in the sandbox. A directory source is copied into this directory (its contents, not the directory itself). Parents are created.",
  }),
  user: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "Owner of the uploaded files. Default: the sandbox's default user." }),
});

/** A command given as a shell line. */
interface RunCommand {
  run: string | string[];
  cmd?: undefined;
  args?: undefined;
}
/** A command given as an executable and its arguments. */
interface ExecCommand {
  cmd: string;
  run?: undefined;
}
/** A Provisioner that creates its sandbox. */
interface FromTemplate {
  template: string;
  sandboxID?: undefined;
}
/** A Provisioner that works in an existing sandbox. */
interface InSandbox {
  sandboxID: string;
  template?: undefined;
}

/**
 * One setup command. Exactly one of `run` (a shell line) and `cmd` is given:
 * the schema stays one object (Terraform and the CDK need one shape) and its
 * type is the union, so that code narrows instead of asserting.
 */
const commandSpecSchema = z
  .strictObject({
    run: runLinesSchema().optional().meta({
      description:
        'A shell line, or a list of lines run as one line joined with " && " (as the SDK\'s runCmd); run with /bin/bash -l -c. Exactly one of run, cmd.',
    }),
    cmd: z.string().min(1, "must be a non-empty executable path").optional().meta({
      description: "An executable, run directly with args (no shell). Exactly one of run, cmd.",
    }),
    args: z
      .array(z.string())
      .optional()
      .meta({ description: "Arguments of cmd. Default: no arguments." }),
    cwd: z.string().min(1).optional().meta({
      description:
        "Working directory. Default: the template's WORKDIR, else the user's home (as E2B's commands.run).",
    }),
    envs: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "Extra environment variables. Default: none." }),
    user: z.string().min(1).optional().meta({
      description: "User to run as (user or root). Default: the sandbox's default user.",
    }),
    timeoutSeconds: z
      .number()
      .int()
      .min(1, "must be at least 1 second")
      .max(86_400)
      .optional()
      .meta({
        description: "Seconds before the command is killed and the run fails. Default: 600.",
      }),
  })
  .refine(
    (c): c is typeof c & (RunCommand | ExecCommand) =>
      (c.run === undefined) !== (c.cmd === undefined),
    { message: "must set exactly one of `run` (a shell line) or `cmd` (an executable)" },
  )
  .refine((c) => c.args === undefined || c.cmd !== undefined, {
    message: "`args` goes with `cmd`; with `run`, put the arguments in the shell line",
    path: ["args"],
  })
  .meta({ description: "One setup command: exactly one of run (a shell line) and cmd." });

/** The Provisioner's inputs. */
export const provisionerArgsSchema = z
  .strictObject({
    template: z.string().min(1).optional().meta({
      description:
        "Template of the sandbox the Provisioner creates for the work: a Template resource's `ref` (`<templateID>@<buildID>`, so that a new build of the template runs the Provisioner again), or a template ID or name (then a rebuild is not seen). Exactly one of template, sandboxID.",
    }),
    sandboxID: sandboxIDSchema.optional().meta({
      description:
        "An existing, running sandbox to work in; the Provisioner never kills it. Exactly one of template, sandboxID.",
    }),
    files: z
      .array(fileSpecSchema)
      .optional()
      .meta({ description: "Files and directories to upload, in order. Default: none." }),
    commands: z
      .array(commandSpecSchema)
      .optional()
      .meta({ description: "Setup commands, run in order after the upload. Default: none." }),
    triggers: z.record(z.string(), z.string()).optional().meta({
      description:
        'Any string values, e.g. { revision = "1" }; a change runs the commands again. Default: none.',
    }),
    snapshot: z
      .strictObject({
        name: templateNameSchema("my-app-ready").meta({
          description: "The name of the template the snapshot becomes, [namespace/]alias[:tag].",
        }),
      })
      .optional()
      .meta({
        description:
          "Snapshot the sandbox after the commands into a template with this name. Default: no snapshot.",
      }),
    keepSandbox: z.boolean().optional().meta({
      description:
        "Keep the sandbox the Provisioner created running after provisioning (its ID is the keptSandboxID output), and after a failed run, for inspection (the error gives its ID; nothing is recorded). Ignored with sandboxID. Default: false, the sandbox is killed once provisioning ends.",
    }),
    sandboxTimeoutSeconds: z.number().int().min(1).max(86_400).optional().meta({
      description:
        "Lifetime of a created sandbox, in seconds. Default: 3600 while provisioning; a kept sandbox keeps it.",
    }),
    envs: z.record(z.string(), z.string()).optional().meta({
      description: "Environment variables of a created sandbox; sensitive. Default: none.",
    }),
    metadata: z.record(z.string(), z.string()).optional().meta({
      description: 'Metadata of a created sandbox. Default: { "sandbox-iac" = "provisioner" }.',
    }),
    volumeMounts: z
      .array(
        z.strictObject({
          name: z.string().min(1, "must be a volume name").meta({
            description: "The volume's name (a Volume resource's name).",
          }),
          path: z
            .string()
            .regex(/^\/./, "must be an absolute path other than '/', e.g. /mnt/data")
            .meta({ description: "Where the volume is mounted read-write in the sandbox." }),
        }),
      )
      .optional()
      .meta({
        description:
          "Volumes mounted into a created sandbox (ignored with sandboxID); files written there outlive the sandbox. A change replaces the Provisioner. Default: none.",
      }),
    network: provisionerNetworkSchema.meta({
      description:
        "Outbound network rules of a created sandbox (ignored with sandboxID), as E2B's Sandbox.create network option, e.g. deny everything but a package mirror. A change replaces the Provisioner. Default: no rules.",
    }),
    partSizeMB: z.number().int().min(1).max(4096).optional().meta({
      description:
        "Files larger than this many MiB are split into parts uploaded in parallel and joined in the sandbox (worth it against a network-bound remote service). Default: none; each file goes up as one stream.",
    }),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: "Uploads in flight at once. Default: 8." }),
  })
  .refine(
    (a): a is typeof a & (FromTemplate | InSandbox) =>
      (a.template === undefined) !== (a.sandboxID === undefined),
    {
      message:
        "must set exactly one of `template` (create a sandbox) or `sandboxID` (use an existing one)",
      path: ["template"],
    },
  );

/** The Provisioner's inputs (as given; check changes nothing). */
export type ProvisionerArgs = z.infer<typeof provisionerArgsSchema>;
/** One file entry of {@link ProvisionerArgs}. */
export type FileSpec = z.infer<typeof fileSpecSchema>;
/** One command entry of {@link ProvisionerArgs}. */
export type CommandSpec = z.infer<typeof commandSpecSchema>;

/** Content hash, mode and size of one uploaded file. */
const fileDigestEntrySchema = z.strictObject({
  sha256: z.string().meta({ description: "Hex SHA-256 of the content." }),
  mode: z.number().meta({ description: "Permission bits, e.g. 420 (0o644)." }),
  size: z.number().meta({ description: "Size in bytes." }),
});

/** The outputs of the Provisioner besides its inputs. */
export const provisionerOutputsSchema = z.strictObject({
  keptSandboxID: z.string().optional().meta({
    description: "The sandbox kept running after provisioning (with keepSandbox), if any.",
  }),
  keptSandboxRef: z.string().optional().meta({
    description:
      "The kept sandbox as this run left it, `<sandboxID>@<run>`: give it as a Snapshot's `sandboxID` so that every run of the Provisioner retakes the snapshot. Changes with every run; not known in a plan that runs again.",
  }),
  fileDigest: z.record(z.string(), fileDigestEntrySchema).meta({
    description:
      "Content hash, mode and size of every uploaded file, by sandbox path (known at plan time).",
  }),
  snapshotID: z.string().optional().meta({
    description: "The snapshot's ID (usable as a template), when snapshot is set.",
  }),
  snapshotNames: z
    .array(z.string())
    .optional()
    .meta({ description: "The snapshot's names, when snapshot is set." }),
  commandsRun: z.number().meta({ description: "How many commands ran in the last run." }),
  bytesUploaded: z.number().meta({ description: "Bytes uploaded by the last run." }),
});

/** The Provisioner's inputs as one flat record, as state stores them and diffs compare them. */
export type ProvisionerInputRecord = z.input<typeof provisionerArgsSchema>;

/** Outputs of the Provisioner: its inputs (as given) plus what the run produced. */
export type ProvisionerOutputs = ProvisionerInputRecord & z.infer<typeof provisionerOutputsSchema>;

/**
 * How a change to each input is applied.
 * - A different sandbox (`template`, `sandboxID`) replaces the Provisioner.
 * - `files` re-syncs: only files whose content hash or mode changed are
 *   uploaded, files no longer declared are removed; the commands run again.
 * - `commands` and `triggers` run the commands again.
 * - `snapshot` takes a new snapshot (a new build of the same name).
 * - Sandbox settings that only matter at creation replace.
 */
export const provisionerChangeRules: Record<keyof ProvisionerArgs, ChangeRule> = {
  template: "replace",
  sandboxID: "replace",
  files: "update",
  commands: "update",
  triggers: "update",
  snapshot: "update",
  keepSandbox: "replace",
  sandboxTimeoutSeconds: "update",
  envs: "replace",
  metadata: "replace",
  volumeMounts: "replace",
  network: "replace",
  partSizeMB: "ignore",
  concurrency: "ignore",
};

/** Every output comes from the last run; an update runs again. */
export const provisionerOutputRules: Record<
  keyof z.infer<typeof provisionerOutputsSchema>,
  OutputRule
> = {
  // An update works in the kept sandbox itself; keepSandbox changes replace.
  keptSandboxID: "stable",
  keptSandboxRef: "recomputed",
  fileDigest: "recomputed",
  snapshotID: "recomputed",
  snapshotNames: "recomputed",
  commandsRun: "recomputed",
  bytesUploaded: "recomputed",
};

/** Inputs whose values are secrets: never shown in messages, sensitive in every adapter. */
export const provisionerSensitiveInputs = ["envs", "network.egressProxy.password"] as const;
