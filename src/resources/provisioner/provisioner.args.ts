/**
 * Inputs of the Provisioner: the files to put into a sandbox, the setup
 * commands to run there, and what to do with the sandbox afterwards. The
 * change rules beside the fields say how each change is applied.
 *
 * @module
 */
import { z } from "zod";
import type { ChangeRule } from "../core/lifecycle";

const sandboxPath = z
  .string()
  .min(1, "must be a non-empty path inside the sandbox")
  .refine((p) => !p.includes("\0"), "must not contain NUL bytes");

/** One file or directory to upload. */
export const fileSpecSchema = z.object({
  /** Local file or directory, absolute or relative to the program's working directory. */
  source: z.string().min(1, "must be a local file or directory path"),
  /**
   * Where it goes in the sandbox. A directory source is copied into this
   * directory (its contents, not the directory itself). Parents are created.
   */
  destination: sandboxPath,
  /**
   * Owner of the uploaded files.
   * @default the sandbox's default user (`user`)
   */
  user: z.string().min(1).optional(),
});

/** One setup command. Exactly one of `run` (a shell line) and `cmd` is given. */
export const commandSpecSchema = z
  .object({
    /** A shell line, run with `/bin/bash -l -c`. */
    run: z.string().min(1, "must be a non-empty shell line").optional(),
    /** An executable, run directly with `args` (no shell). */
    cmd: z.string().min(1, "must be a non-empty executable path").optional(),
    /** Arguments of `cmd`. @default no arguments */
    args: z.array(z.string()).optional(),
    /** Working directory. @default the user's home */
    cwd: z.string().min(1).optional(),
    /** Extra environment variables. @default none */
    envs: z.record(z.string(), z.string()).optional(),
    /** User to run as (`user` or `root`). @default the sandbox's default user */
    user: z.string().min(1).optional(),
    /**
     * Seconds before the command is killed and the provisioning fails.
     * @default 600
     */
    timeoutSeconds: z.number().int().min(1, "must be at least 1 second").max(86_400).optional(),
  })
  .refine((c) => (c.run === undefined) !== (c.cmd === undefined), {
    message: "must set exactly one of `run` (a shell line) or `cmd` (an executable)",
  })
  .refine((c) => c.args === undefined || c.cmd !== undefined, {
    message: "`args` goes with `cmd`; with `run`, put the arguments in the shell line",
    path: ["args"],
  });

/** The Provisioner's inputs. */
export const provisionerArgsSchema = z
  .object({
    /**
     * Template (id or name) of the sandbox the Provisioner creates for the
     * work. Exactly one of `template` and `sandboxID`.
     */
    template: z.string().min(1).optional(),
    /** An existing sandbox to work in; the Provisioner never kills it. */
    sandboxID: z
      .string()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)?$/, "must be a sandbox id like `i0123456789abcdefghij`")
      .optional(),
    /** Files and directories to upload, in order. @default none */
    files: z.array(fileSpecSchema).optional(),
    /** Setup commands, run in order after the upload. @default none */
    commands: z.array(commandSpecSchema).optional(),
    /** Any values; a change forces the commands to run again. @default none */
    triggers: z.array(z.unknown()).optional(),
    /**
     * Snapshot the sandbox after the commands into a template with this name.
     * @default no snapshot
     */
    snapshot: z.object({ name: z.string().min(1, "must be a template name") }).optional(),
    /**
     * Keep the sandbox the Provisioner created running after provisioning
     * (its id is then an output). Ignored with `sandboxID`.
     * @default false: the sandbox is killed once provisioning ends
     */
    keepSandbox: z.boolean().optional(),
    /**
     * Lifetime of a created sandbox, in seconds.
     * @default 3600 while provisioning; a kept sandbox keeps it
     */
    sandboxTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
    /** Environment variables of a created sandbox. @default none */
    envs: z.record(z.string(), z.string()).optional(),
    /** Metadata of a created sandbox. @default `{ "sandbox-iac": "provisioner" }` */
    metadata: z.record(z.string(), z.string()).optional(),
    /**
     * Files larger than this many MiB are split into parts uploaded in
     * parallel and joined in the sandbox with `/files/compose`.
     * @default 64
     */
    partSizeMB: z.number().int().min(1).max(4096).optional(),
    /** Uploads in flight at once. @default 8 */
    concurrency: z.number().int().min(1).max(64).optional(),
  })
  .refine((a) => (a.template === undefined) !== (a.sandboxID === undefined), {
    message:
      "must set exactly one of `template` (create a sandbox) or `sandboxID` (use an existing one)",
    path: ["template"],
  });

/** The Provisioner's inputs after checking. */
export type ProvisionerArgs = z.infer<typeof provisionerArgsSchema>;
/** One file entry of {@link ProvisionerArgs}. */
export type FileSpec = z.infer<typeof fileSpecSchema>;
/** One command entry of {@link ProvisionerArgs}. */
export type CommandSpec = z.infer<typeof commandSpecSchema>;

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
  partSizeMB: "ignore",
  concurrency: "ignore",
};
