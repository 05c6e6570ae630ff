/**
 * The one fixture that starts the local service for a test: in-process
 * ({@link startService}) or as `sandbox-iac serve` in a child process that can
 * be killed with SIGKILL ({@link startServiceProcess}). Both run over a fresh
 * data dir unless given one, load the agent bundle the same way and remove
 * what they created on `close()`.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import type { Readable } from "node:stream";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { resolveConfig } from "../../src/config";
import { startLocalService, type LocalServiceOptions } from "../../src/local";
import { agentBundleDirOnHost } from "../../src/local/agent-launch";

const ROOT = path.resolve(__dirname, "..", "..");
/** Set to a file path to keep every service line of a test run there (for debugging). */
const LOG_FILE_ENV = "SANDBOX_IAC_TEST_LOG";

/** Where a client reaches the service: what the SDK takes as `apiUrl`, `sandboxUrl`, `apiKey`. */
export interface Endpoint {
  apiUrl: string;
  sandboxUrl: string;
  apiKey: string;
}

/** Options of {@link startService} and {@link startServiceProcess}. */
export interface ServiceOptions {
  /**
   * The data dir to serve from, e.g. the one of a service that was stopped or killed.
   * @default a fresh temp dir, removed by `close()`; a given dir is left in place
   */
  dataDir?: string | undefined;
  /**
   * Receives the service's log lines (in-process only).
   * @default lines are dropped (or appended to `$SANDBOX_IAC_TEST_LOG` when set)
   */
  log?: ((line: string) => void) | undefined;
  /**
   * More `serve` options (child process only), e.g. `["--api-key-file", path]`.
   * @default none
   */
  args?: string[] | undefined;
  /**
   * Variables added to the child's environment (child process only).
   * @default none: the test runner's environment as it is
   */
  env?: Record<string, string> | undefined;
  /**
   * A descriptor the child is started with, as a careless parent leaves one
   * open (child process only): one end of a socket pair (Node's stdio pipe)
   * at this number, named in {@link ServiceProcess.stray}.
   * @default none
   */
  strayFd?: number | undefined;
  /** `startLocalService`'s sandbox and step cache limits (in-process only). @default the service's defaults */
  limits?:
    | Pick<
        LocalServiceOptions,
        "maxSandboxes" | "maxSandboxesPerKey" | "maxStepCacheBytes" | "maxStepCacheEntries"
      >
    | undefined;
  /** `startLocalService`'s DNS resolvers (in-process only), e.g. a stand-in's. @default the host's */
  dnsResolvers?: string[] | undefined;
  /** `startLocalService`'s extra upstream CAs of the egress edge (in-process only). @default none */
  edgeUpstreamCa?: string[] | undefined;
}

/** A service started in-process by {@link startService}. */
export interface TestService extends Endpoint {
  dataDir: string;
  /** The domain it serves sandboxes under (`E2B_DOMAIN`): `localhost:<port>` here. */
  domain: string;
  /** Stops the service (its sandboxes come back paused on the next start); removes the data dir it created. */
  close(): Promise<void>;
  /**
   * Stops this service and starts a new one over the same data dir, which the
   * new one then owns; `limits` replace the ones it was started with.
   * @default the same limits
   */
  restart(limits?: ServiceOptions["limits"]): Promise<TestService>;
}

/** `sandbox-iac serve` started in a child process by {@link startServiceProcess}. */
export interface ServiceProcess extends Endpoint {
  dataDir: string;
  /** The child's pid (the service's own process). */
  pid: number;
  /** The first line it printed on stdout, which carries the `E2B_*` settings. */
  readyLine: string;
  /** What it printed on stderr so far. */
  stderr(): string;
  /** What the child holds at {@link ServiceOptions.strayFd}, as `/proc/<pid>/fd` names it (`socket:[ino]`). */
  stray: string | undefined;
  /** Kills it with SIGKILL and waits until it is gone. */
  kill9(): Promise<void>;
  /** Kills it if still running and removes the data dir it created. */
  close(): Promise<void>;
}

/**
 * Environment variable read by the test helpers only: a directory holding a
 * built `agent.js` to use instead of `dist/agent` (handy before `npm run build`).
 */
const TEST_AGENT_DIR_ENV = "SANDBOX_IAC_TEST_AGENT_DIR";

/**
 * The agent bundle dir: `$SANDBOX_IAC_TEST_AGENT_DIR`, else `dist/agent`.
 * `npm test` builds before it runs the tests.
 */
export async function agentBundleDir(): Promise<string> {
  const fromEnv = process.env[TEST_AGENT_DIR_ENV];
  if (fromEnv) return fromEnv;
  const dist = agentBundleDirOnHost();
  if (!fs.existsSync(path.join(dist, "agent.js"))) {
    throw new Error(`no agent bundle at ${dist}: run \`npm run build\` first (npm test does)`);
  }
  return dist;
}

/** The built CLI entry `dist/cli/main.js`; `npm test` builds before it runs the tests. */
function cliEntry(): string {
  const cli = path.join(ROOT, "dist", "cli", "main.js");
  if (!fs.existsSync(cli)) throw new Error(`no CLI at ${cli}: run \`npm run build\` first`);
  return cli;
}

/** A fresh temp dir; the caller removes it. */
function tempDataDir(prefix = "sandbox-iac-svc-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function logSink(log: ((line: string) => void) | undefined): ((line: string) => void) | undefined {
  const file = process.env[LOG_FILE_ENV];
  if (!file) return log;
  return (line) => {
    fs.appendFileSync(file, `${new Date().toISOString()} ${line}\n`);
    log?.(line);
  };
}

/** Starts the service in-process on a free port of 127.0.0.1. */
export async function startService(opts: ServiceOptions = {}): Promise<TestService> {
  return startOwning(opts.dataDir ?? tempDataDir(), opts.dataDir === undefined, opts.log, {
    ...opts.limits,
    ...(opts.dnsResolvers ? { dnsResolvers: opts.dnsResolvers } : {}),
    ...(opts.edgeUpstreamCa ? { edgeUpstreamCa: opts.edgeUpstreamCa } : {}),
  });
}

/** Starts the service over `dataDir`, which `close()` removes when `owned`. */
async function startOwning(
  dataDir: string,
  owned: boolean,
  log: ((line: string) => void) | undefined,
  limits: ServiceOptions["limits"] & Pick<ServiceOptions, "dnsResolvers" | "edgeUpstreamCa"> = {},
): Promise<TestService> {
  const removeOwned = () => {
    if (owned) removeDataDir(dataDir);
  };
  try {
    const sink = logSink(log);
    const svc = await startLocalService({
      port: 0,
      dataDir,
      agentBundleDir: await agentBundleDir(),
      ...limits,
      ...(sink ? { log: sink } : {}),
    });
    const handle: TestService = {
      apiUrl: svc.apiUrl,
      sandboxUrl: svc.sandboxUrl,
      apiKey: svc.apiKey,
      dataDir,
      domain: svc.domain,
      async close() {
        await svc.close();
        removeOwned();
      },
      async restart(newLimits) {
        await svc.close();
        const next = await startOwning(dataDir, owned, log, { ...limits, ...newLimits });
        // The suite's teardown holds the first handle: its close() closes the newest service.
        handle.close = () => next.close();
        return next;
      },
    };
    return handle;
  } catch (err) {
    removeOwned();
    throw err;
  }
}

/**
 * Removes a test service's data dir. A service killed with SIGKILL leaves its
 * volumes mounted (the shared `volumes` bind and each volume's image; its next
 * start would clear them): those are unmounted first, deepest first.
 */
function removeDataDir(dataDir: string): void {
  const mounted = fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((p) => p === dataDir || p.startsWith(`${dataDir}/`));
  for (const p of mounted.sort((a, b) => b.length - a.length)) spawnSync("umount", ["-l", p]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}

/** Starts `sandbox-iac serve --port 0` in a child process and waits for its ready line. */
export async function startServiceProcess(opts: ServiceOptions = {}): Promise<ServiceProcess> {
  const owned = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? tempDataDir();
  const child = spawn(
    process.execPath,
    [
      cliEntry(),
      "serve",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--agent-dir",
      await agentBundleDir(),
      ...(opts.args ?? []),
    ],
    {
      stdio: [
        "ignore",
        "pipe",
        "pipe",
        ...(opts.strayFd !== undefined
          ? [...Array<"ignore">(opts.strayFd - 3).fill("ignore"), "pipe" as const]
          : []),
      ],
      env: { ...process.env, ...opts.env },
    },
  );
  // Piped, as asked above: a longer stdio list loses the tuple's types.
  const [, childOut, childErr] = child.stdio as unknown as [null, Readable, Readable];
  let stderr = "";
  childErr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill9 = async (): Promise<void> => {
    if (running()) child.kill("SIGKILL");
    await exited;
  };
  const close = async (): Promise<void> => {
    await kill9();
    if (owned) removeDataDir(dataDir);
  };
  let readyLine: string;
  try {
    readyLine = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: childOut }).once("line", resolve);
      child.once("exit", (code, signal) =>
        reject(
          new Error(
            `sandbox-iac serve exited (${String(code ?? signal)}) before its ready line: ${stderr}`,
          ),
        ),
      );
    });
  } catch (err) {
    await close();
    throw err;
  }
  // Over TLS the ready line gives the domain only, as E2B's cloud needs.
  const domain = /E2B_DOMAIN=(\S+)/.exec(readyLine)?.[1];
  const cloudUrl = domain && !readyLine.includes("E2B_API_URL=") ? `https://api.${domain}` : "";
  const apiUrl = /E2B_API_URL=(\S+)/.exec(readyLine)?.[1] ?? cloudUrl;
  const apiKey = /E2B_API_KEY=(\S+)/.exec(readyLine)?.[1];
  const sandboxUrl = /E2B_SANDBOX_URL=(\S+)/.exec(readyLine)?.[1] ?? cloudUrl;
  if (!apiUrl || !apiKey || !sandboxUrl) {
    await close();
    throw new Error(`the ready line of sandbox-iac serve lacks an E2B_* setting: ${readyLine}`);
  }
  return {
    apiUrl,
    apiKey,
    sandboxUrl,
    dataDir,
    pid: child.pid!,
    readyLine,
    stderr: () => stderr,
    stray:
      opts.strayFd !== undefined
        ? fs.readlinkSync(`/proc/${child.pid}/fd/${opts.strayFd}`)
        : undefined,
    kill9,
    close,
  };
}

/** Just the connection settings of a service, to hand to the official SDK. */
export function connectionOpts(svc: Endpoint): Endpoint {
  return { apiUrl: svc.apiUrl, sandboxUrl: svc.sandboxUrl, apiKey: svc.apiKey };
}

/** The typed control client of the library, pointed at a test service, logging nothing. */
export function controlClientOf(svc: Endpoint): ControlClient {
  return createControlClient({
    config: resolveConfig({ apiUrl: svc.apiUrl, apiKey: svc.apiKey, env: {} }),
    log: () => undefined,
  });
}

/**
 * Registers the usual hooks of a suite that needs one service: starts it
 * before the tests (handing it to `use`) and closes it after them.
 */
export function useService(use: (svc: TestService) => void, opts: ServiceOptions = {}): void {
  let svc: TestService | undefined;
  beforeAll(async () => {
    svc = await startService(opts);
    use(svc);
  });
  afterAll(async () => {
    await svc?.close();
  });
}
