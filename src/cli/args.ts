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
  /**
   * The key given on the command line (readable by every host user in
   * `/proc/<pid>/cmdline`: prefer `apiKeyFile` or `E2B_API_KEY`).
   * @default `apiKeyFile`, else `E2B_API_KEY`, else the key kept in the data dir
   */
  apiKey?: string | undefined;
  /** A file whose first line is the API key. @default none (see `apiKey`) */
  apiKeyFile?: string | undefined;
  /** @default the built `dist/agent` */
  agentDir?: string | undefined;
  /** @default derived from the host's memory (see `LocalServiceOptions.maxSandboxes`) */
  maxSandboxes?: number | undefined;
  /** @default `maxSandboxes` */
  maxSandboxesPerKey?: number | undefined;
  /** `--insecure-registry host:port`, repeatable. @default none */
  insecureRegistries: string[];
  /** `--tls-cert` and `--tls-key`: PEM files; HTTPS when given. @default plain HTTP */
  tls?: { certFile: string; keyFile: string } | undefined;
  /** `--domain`. @default see `LocalServiceOptions.domain` */
  domain?: string | undefined;
  /** `--max-step-cache-bytes`, in bytes. @default the service's (10 GiB) */
  maxStepCacheBytes?: number | undefined;
  /** `--max-step-cache-entries`. @default the service's (2000) */
  maxStepCacheEntries?: number | undefined;
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
  --api-key-file FILE  file holding the API key clients must send (default:
                     $E2B_API_KEY when set, else a key generated on first start
                     and kept in the data dir)
  --api-key KEY      the API key itself; every host user can read it in
                     /proc/<pid>/cmdline, so prefer --api-key-file or E2B_API_KEY
  --max-sandboxes N  most sandboxes running at once, warm and building ones included;
                     past it starts answer 429 (default: as many 512 MiB sandboxes as
                     the host's memory minus an eighth, at least 1 GiB, holds)
  --max-sandboxes-per-key N
                     most sandboxes of the API key running at once; past it create and
                     resume answer E2B's 429 "maximum number of concurrent E2B
                     sandboxes" (default: --max-sandboxes)
  --insecure-registry HOST:PORT
                     let template builds pull images from this registry over plain
                     HTTP (repeatable; loopback registries always may)
  --tls-cert FILE --tls-key FILE
                     serve HTTPS with this PEM certificate (covering *.DOMAIN) and key,
                     as E2B's cloud does: clients need only E2B_DOMAIN and E2B_API_KEY
  --domain DOMAIN    the name clients reach the service by: api.DOMAIN and
                     <port>-<sandboxID>.DOMAIN (default: with TLS, the certificate's
                     *.DOMAIN name, plus :PORT unless 443; else localhost:PORT)
  --max-step-cache-bytes SIZE
                     most disk the layers of cached template build steps may take,
                     in bytes or with a K, M, G or T suffix (powers of 1024); past it
                     the least recently used cached steps are dropped and their
                     layers deleted unless a template uses them (default 10G)
  --max-step-cache-entries N
                     most cached template build steps kept, least recently used
                     dropped first (default 2000)
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
const SERVE_OPTIONS = [
  "host",
  "port",
  "data-dir",
  "api-key",
  "api-key-file",
  "agent-dir",
  "max-sandboxes",
  "max-sandboxes-per-key",
  "insecure-registry",
  "tls-cert",
  "tls-key",
  "domain",
  "max-step-cache-bytes",
  "max-step-cache-entries",
] as const;
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
  if (values["api-key-file"] === "")
    throw invalidArgument(OPERATION, "--api-key-file", "", "a file path");
  if (values["api-key"] !== undefined && values["api-key-file"] !== undefined)
    throw invalidArgument(
      OPERATION,
      "--api-key-file",
      values["api-key-file"],
      "the only source of the key, but --api-key was given too",
      "give the key one way: --api-key-file (preferred) or --api-key",
    );
  const tlsCert = values["tls-cert"];
  const tlsKey = values["tls-key"];
  if ((tlsCert === undefined) !== (tlsKey === undefined))
    throw invalidArgument(
      OPERATION,
      tlsCert === undefined ? "--tls-cert" : "--tls-key",
      undefined,
      "given together with " + (tlsCert === undefined ? "--tls-key" : "--tls-cert"),
      "pass both PEM files, e.g. --tls-cert cert.pem --tls-key key.pem",
    );
  const maxSandboxes = positiveInteger("--max-sandboxes", values["max-sandboxes"]);
  const maxSandboxesPerKey = positiveInteger(
    "--max-sandboxes-per-key",
    values["max-sandboxes-per-key"],
  );
  return {
    command: "serve",
    host: values.host ?? "127.0.0.1",
    port: values.port === undefined ? 3000 : Number(values.port),
    dataDir: values["data-dir"],
    apiKey: values["api-key"],
    apiKeyFile: values["api-key-file"],
    agentDir: values["agent-dir"],
    maxSandboxes,
    maxSandboxesPerKey,
    insecureRegistries: insecureRegistries(rest),
    tls: tlsCert && tlsKey ? { certFile: tlsCert, keyFile: tlsKey } : undefined,
    domain: values.domain,
    maxStepCacheBytes: byteSize("--max-step-cache-bytes", values["max-step-cache-bytes"]),
    maxStepCacheEntries: positiveInteger(
      "--max-step-cache-entries",
      values["max-step-cache-entries"],
    ),
  };
}

/** Powers of 1024 a size may end with (`10G`), as `du` and `docker` write sizes. */
const SIZE_SUFFIXES: Record<string, number> = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** A size in bytes, written as digits with an optional K, M, G or T suffix. */
function byteSize(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+)([KMGT]?)$/i.exec(value);
  const bytes = match ? Number(match[1]) * (SIZE_SUFFIXES[match[2].toUpperCase()] ?? 1) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw invalidArgument(
      OPERATION,
      option,
      value,
      "a size >= 1 in bytes, or with a K, M, G or T suffix (powers of 1024)",
      `for example ${option} 20G`,
    );
  return bytes;
}

function positiveInteger(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw invalidArgument(OPERATION, option, value, "an integer >= 1", `for example ${option} 8`);
  return Number(value);
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
