/**
 * Argument parsing of the `sandbox-iac` command line (options read by
 * `node:util.parseArgs`, see options.ts).
 *
 * @module
 */
import { invalidArgument } from "../errors";
import { nearestKey } from "../resources/core/unknown-keys";
import { parseOptions } from "./options";
import { parseTerraformArgs, type TerraformInstallArgs } from "./terraform-args";

/** Options of `sandbox-iac serve`. */
export interface ServeArgs {
  command: "serve";
  /** @default "127.0.0.1" */
  host: string;
  /** @default 3000 */
  port: number;
  /** @default the default data dir */
  dataDir?: string | undefined;
  /** @default the key kept in the data dir */
  apiKey?: string | undefined;
  /** @default the built `dist/agent` */
  agentDir?: string | undefined;
}

/** Options of `sandbox-iac status`. */
interface StatusArgs {
  command: "status";
}

/** What the command line asks for. */
export type CliArgs =
  | ServeArgs
  | TerraformInstallArgs
  | StatusArgs
  | { command: "help"; text: string }
  | { command: "version" };

/** The text of `sandbox-iac --help`. */
export const USAGE = `Usage: sandbox-iac <command> [options]

Commands:
  serve                run the local E2B-compatible sandbox service
  status               show the service's URL and its sandboxes, templates and builds
  terraform install    write the Terraform provider into a plugin directory

Options:
  -h, --help           show help (sandbox-iac <command> --help for a command's options)
  -V, --version        show the version

From a checkout, run \`npm run build\` first; then \`npx sandbox-iac <command>\`.
`;

/** The text of `sandbox-iac serve --help`. */
export const SERVE_USAGE = `Usage: sandbox-iac serve [options]

Serves the E2B-compatible control API and the sandbox interface on one port,
and prints the environment the e2b SDK and CLI need (E2B_API_URL, E2B_API_KEY, ...).
Needs Linux, root and bubblewrap (apt-get install bubblewrap).

Options:
  --host HOST        interface to listen on (default 127.0.0.1)
  --port PORT        TCP port, 0 for any free port (default 3000)
  --data-dir DIR     state, layers and sandboxes (default $XDG_DATA_HOME/sandbox-iac
                     or ~/.local/share/sandbox-iac)
  --api-key KEY      API key clients must send (default: generated on first start
                     and kept in the data dir)
  -h, --help         show this help
`;

/** The text of `sandbox-iac status --help`. */
export const STATUS_USAGE = `Usage: sandbox-iac status

Shows the service the environment points at (E2B_API_URL, E2B_API_KEY, else the
local service at http://127.0.0.1:3000) and its sandboxes, templates and builds
with their state.

Options:
  -h, --help         show this help
`;

/** The text of `sandbox-iac terraform install --help`. */
export const TERRAFORM_USAGE = `Usage: sandbox-iac terraform install [--dir DIR]

Writes the Terraform provider (source sandbox-iac/sandboxiac) into the plugin
directory DIR (default $XDG_DATA_HOME/sandbox-iac/terraform-plugins or
~/.local/share/sandbox-iac/terraform-plugins) and prints how to point Terraform at it.

Options:
  --dir DIR          the plugin directory
  -h, --help         show this help
`;

const OPERATION = "cli";
/** `--agent-dir` is for the project's own tests (a freshly built agent); the help leaves it out. */
const SERVE_OPTIONS = ["host", "port", "data-dir", "api-key", "agent-dir"] as const;
const COMMANDS = ["serve", "status", "terraform"];

function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/** Parses `argv` (without `node` and the script). */
export function parseArgs(argv: string[]): CliArgs {
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h")
    return { command: "help", text: USAGE };
  if (argv[0] === "--version" || argv[0] === "-V") return { command: "version" };
  const [command, ...rest] = argv;
  if (command === "terraform") {
    return wantsHelp(rest) ? { command: "help", text: TERRAFORM_USAGE } : parseTerraformArgs(rest);
  }
  if (command === "status") {
    if (wantsHelp(rest)) return { command: "help", text: STATUS_USAGE };
    parseOptions(rest, [], "run `sandbox-iac status --help`");
    return { command: "status" };
  }
  if (command !== "serve") {
    const nearest = nearestKey(command, COMMANDS);
    throw invalidArgument(
      OPERATION,
      "command",
      command,
      "serve, status or terraform",
      nearest ? `did you mean \`sandbox-iac ${nearest}\`?` : "run `sandbox-iac --help`",
    );
  }
  if (wantsHelp(rest)) return { command: "help", text: SERVE_USAGE };
  const values = parseOptions(rest, SERVE_OPTIONS, "run `sandbox-iac serve --help`");
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || Number(values.port) > 65535))
    throw invalidArgument(OPERATION, "--port", values.port, "an integer from 0 to 65535");
  if (values["api-key"] === "")
    throw invalidArgument(OPERATION, "--api-key", "", "a non-empty key such as e2b_<hex>");
  return {
    command: "serve",
    host: values.host ?? "127.0.0.1",
    port: values.port === undefined ? 3000 : Number(values.port),
    dataDir: values["data-dir"],
    apiKey: values["api-key"],
    agentDir: values["agent-dir"],
  };
}
