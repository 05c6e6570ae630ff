/**
 * Arguments of `sandbox-iac terraform ...`, parsed with `node:util.parseArgs`.
 *
 * @module
 */
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { invalidArgument } from "../errors";

/** Options of `sandbox-iac terraform install`. */
export interface TerraformInstallArgs {
  command: "terraform-install";
  /** @default {@link defaultPluginDir} */
  dir: string;
}

/** The default plugin directory: `$XDG_DATA_HOME/sandbox-iac/terraform-plugins` or `~/.local/share/...`. */
export function defaultPluginDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share");
  return path.join(base, "sandbox-iac", "terraform-plugins");
}

/** Parses the arguments after `terraform`. */
export function parseTerraformArgs(argv: string[]): TerraformInstallArgs {
  const [sub, ...rest] = argv;
  if (sub !== "install") {
    throw invalidArgument(
      "cli",
      "terraform subcommand",
      sub,
      "install",
      "run `sandbox-iac terraform install [--dir DIR]`",
    );
  }
  let values: { dir?: string | undefined };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { dir: { type: "string" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw invalidArgument(
      "cli",
      "terraform install options",
      rest.join(" "),
      "only --dir DIR",
      err instanceof Error ? err.message : undefined,
    );
  }
  if (values.dir === "") {
    throw invalidArgument("cli", "--dir", values.dir, "a directory path");
  }
  return { command: "terraform-install", dir: values.dir ?? defaultPluginDir() };
}
