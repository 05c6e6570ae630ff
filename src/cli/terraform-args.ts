/**
 * Arguments of `sandbox-iac terraform ...` (options read by `node:util.parseArgs`,
 * see options.ts).
 *
 * @module
 */
import * as os from "node:os";
import * as path from "node:path";
import { invalidArgument } from "../errors";
import { parseOptions } from "./options";

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
  const values = parseOptions(rest, ["dir"], "run `sandbox-iac terraform install [--dir DIR]`");
  if (values.dir === "") {
    throw invalidArgument("cli", "--dir", values.dir, "a directory path");
  }
  return { command: "terraform-install", dir: values.dir ?? defaultPluginDir() };
}
