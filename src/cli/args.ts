/**
 * Argument parsing of the `sandbox-iac` command line (options read by
 * `node:util.parseArgs`, see options.ts).
 *
 * @module
 */
import { invalidArgument } from "../errors";
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
  /** `--insecure-registry host:port`, repeatable. @default none */
  insecureRegistries: string[];
}

/** What the command line asks for. */
export type CliArgs = ServeArgs | TerraformInstallArgs | { command: "help" };

/** The text of `--help`. */
export const USAGE = `Usage: sandbox-iac serve [options]
       sandbox-iac terraform install [--dir DIR]

Serves the E2B-compatible control API and the sandbox interface on one port.
Needs Linux, root and bubblewrap (apt-get install bubblewrap).

Options:
  --host HOST        interface to listen on (default 127.0.0.1)
  --port PORT        TCP port, 0 for any free port (default 3000)
  --data-dir DIR     state, layers and sandboxes (default $XDG_DATA_HOME/sandbox-iac
                     or ~/.local/share/sandbox-iac)
  --api-key KEY      API key clients must send (default: generated on first start
                     and kept in the data dir)
  --agent-dir DIR    directory holding the agent bundle agent.js (default dist/agent)
  --insecure-registry HOST:PORT
                     let template builds pull images from this registry over plain
                     HTTP (repeatable; loopback registries always may)
  -h, --help         show this help

sandbox-iac terraform install [--dir DIR] writes the Terraform provider
(source sandbox-iac/sandboxiac) into the plugin directory DIR (default
$XDG_DATA_HOME/sandbox-iac/terraform-plugins or ~/.local/share/sandbox-iac/terraform-plugins)
and prints how to point Terraform at it.
`;

const OPERATION = "cli";
const SERVE_OPTIONS = [
  "host",
  "port",
  "data-dir",
  "api-key",
  "agent-dir",
  "insecure-registry",
] as const;

/** Parses `argv` (without `node` and the script). */
export function parseArgs(argv: string[]): CliArgs {
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h") || argv[0] === "help")
    return { command: "help" };
  const [command, ...rest] = argv;
  if (command === "terraform") return parseTerraformArgs(rest);
  if (command !== "serve")
    throw invalidArgument(
      OPERATION,
      "command",
      command,
      "serve or terraform",
      "run `sandbox-iac --help`",
    );
  const values = parseOptions(rest, SERVE_OPTIONS, "run `sandbox-iac --help`");
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
    insecureRegistries: insecureRegistries(rest),
  };
}

/** Every `--insecure-registry` value (parseOptions keeps the last one only), each `host[:port]`. */
function insecureRegistries(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const [i, a] of args.entries()) {
    const v =
      a === "--insecure-registry"
        ? args[i + 1]
        : a.startsWith("--insecure-registry=")
          ? a.slice(20)
          : undefined;
    if (v === undefined) continue;
    if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:]+\](:\d{1,5})?$/.test(v))
      throw invalidArgument(
        OPERATION,
        "--insecure-registry",
        v,
        "a registry as host:port, e.g. registry.lan:5000",
        "run `sandbox-iac --help`",
      );
    out.push(v);
  }
  return out;
}
