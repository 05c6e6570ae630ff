/**
 * `sandbox-iac terraform install`: the unpacked provider layout that
 * `terraform init -plugin-dir DIR` and a `filesystem_mirror` read.
 *
 * The launcher in the versioned folder is byte-identical on every machine
 * and across package upgrades: Terraform's lock file pins a hash of that
 * folder, so the launcher holds no path. It finds the provider through
 * `DIR/sandbox-iac-provider` (node and the entry script), outside the hashed
 * folder; Terraform links the folder into `.terraform/providers`, and the
 * launcher follows that link back to DIR.
 *
 * @module
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROVIDER_ADDRESS, PROVIDER_NAME, PROVIDER_SOURCE } from "./schema/names";

/** The file at the root of the plugin directory naming node and the provider's entry script. */
export const POINTER_FILE = "sandbox-iac-provider";

/** The launcher script (the same bytes everywhere). */
export const LAUNCHER = `#!/bin/sh
# The sandbox-iac Terraform provider, written by \`sandbox-iac terraform install\`.
# It runs the provider of the installed sandbox-iac package named in the file
# ${POINTER_FILE} at the root of the plugin directory (five levels up, found
# through the link Terraform makes), so this file never changes and the hash
# in .terraform.lock.hcl stays valid across upgrades of the package.
here=$(dirname "$(readlink -f "$0")")
pointer="$here/../../../../../${POINTER_FILE}"
if [ ! -r "$pointer" ]; then
  echo "sandbox-iac provider: $pointer is missing: run \\\`sandbox-iac terraform install --dir DIR\\\` again" >&2
  exit 1
fi
{ read -r node; read -r entry; } < "$pointer"
exec "$node" "$entry" "$@"
`;

/** Options of {@link installProvider}. */
export interface InstallOptions {
  /** The plugin directory. */
  dir: string;
  /** The provider version (the package's). */
  version: string;
  /**
   * The provider's entry script.
   * @default dist/terraform/main.js of this package
   */
  entry?: string;
  /**
   * The node binary the launcher runs.
   * @default the node running this install
   */
  node?: string;
}

/** What {@link installProvider} wrote. */
export interface InstallResult {
  /** The launcher's path. */
  launcher: string;
  /** The pointer file's path. */
  pointer: string;
  /** What to tell the user: the CLI configuration and the `-plugin-dir` alternative. */
  instructions: string;
}

/** The version of this package (the provider's version). */
export function packageVersion(): string {
  // dist/terraform or src/terraform: the package root is two levels up.
  const file = path.join(__dirname, "..", "..", "package.json");
  return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
}

/** The platform folder Terraform looks for (`linux_amd64`, `darwin_arm64`, ...). */
function platform(): string {
  const arch = { x64: "amd64", arm64: "arm64", ia32: "386", arm: "arm" }[os.arch()] ?? os.arch();
  return `${process.platform}_${arch}`;
}

/** Writes the launcher and the pointer file, returning what to tell the user. */
export function installProvider(options: InstallOptions): InstallResult {
  const dir = path.resolve(options.dir);
  const entry = path.resolve(options.entry ?? path.join(__dirname, "main.js"));
  const node = options.node ?? process.execPath;
  const folder = path.join(dir, PROVIDER_ADDRESS, options.version, platform());
  fs.mkdirSync(folder, { recursive: true });
  const launcher = path.join(folder, `terraform-provider-${PROVIDER_NAME}_v${options.version}`);
  writeAtomic(launcher, LAUNCHER, 0o755);
  const pointer = path.join(dir, POINTER_FILE);
  writeAtomic(pointer, `${node}\n${entry}\n`, 0o644);
  return { launcher, pointer, instructions: instructions(dir, options.version) };
}

function writeAtomic(file: string, content: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

function instructions(dir: string, version: string): string {
  return `Installed ${PROVIDER_SOURCE} v${version} into ${dir}

Either initialise with the plugin directory:

  terraform init -plugin-dir ${dir}

or add this to your Terraform CLI configuration (~/.terraformrc, or the file
named by TF_CLI_CONFIG_FILE) so that a plain \`terraform init\` finds it:

  provider_installation {
    filesystem_mirror {
      path    = "${dir}"
      include = ["${PROVIDER_SOURCE}"]
    }
    direct {
      exclude = ["${PROVIDER_SOURCE}"]
    }
  }
`;
}
