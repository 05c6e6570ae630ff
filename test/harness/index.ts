/**
 * The Pulumi engine harness: `up`, `preview`, `refresh` and `destroy` of a
 * compiled CommonJS Pulumi program, with every dynamic resource driven through
 * the REAL `@pulumi/pulumi` dynamic-provider plugin over gRPC and a JSON state
 * file between runs. No Pulumi CLI is needed. See `README.md` beside this file.
 *
 * @module
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { SandboxIacError } from "../../src/errors";
import { PLUGIN_PID_FILE, type Command, type HarnessResult, type RunnerArgs } from "./result";

export type { Command, HarnessResult } from "./result";
export { renderResult } from "./display";
export { checkpointText, readState } from "./state";
export { isSecret, UNKNOWN } from "./secrets";

/** Options of every harness command. */
export interface RunOptions {
  /** The JSON state file; a missing file is an empty stack. */
  stateFile: string;
  /**
   * Stack config. A key without `:` gets `<project>:` prepended; non-string
   * values are stored as JSON text, as the CLI does for structured config.
   * @default no config
   */
  config?: Record<string, unknown>;
  /** Keys of `config` (namespaced or not) whose values are secret. @default none */
  secretConfig?: string[];
  /** Extra environment of the simulated CLI, seen by the program and the plugin. @default the test process's environment only */
  env?: Record<string, string>;
  /** The project name. @default `name:` of the program's `Pulumi.yaml`, else `"test"` */
  project?: string;
  /** The stack name. @default `"test"` */
  stack?: string;
  /** Most Create/Update/Delete/Read steps in flight at once, like `--parallel`. @default 16 */
  parallel?: number;
  /** Kill the run (runner and plugin) after this long. @default 120000 */
  timeoutMs?: number;
  /**
   * When it fires, the plugin is closed as the engine closes it on a second
   * Ctrl-C: SIGINT to its process group, SIGKILL 5 s later if it is still
   * there (Pulumi's `plugin.go`, `Kill`). The steps in flight then fail.
   * @default never
   */
  interrupt?: AbortSignal;
  /**
   * Receives the runner's output (the plugin's progress lines: build logs,
   * setup commands' output, durations) as it is written, as `pulumi up` shows
   * it live. @default kept for the result's `log` only
   */
  onOutput?: (text: string) => void;
}

/** How long the engine lets a plugin it closes (SIGINT) shut down before SIGKILL. */
const PLUGIN_CLOSE_GRACE_MS = 5_000;

/** A failed command: carries the partial result; the state file holds the partial state. */
export class HarnessRunError extends SandboxIacError {
  constructor(
    command: Command,
    /** Operations done before the failure, errors, log and the partial state. */
    readonly result: HarnessResult,
  ) {
    super("command_failed", result.errors.join("; ") || "the runner failed; see the log", {
      operation: `pulumi ${command}`,
    });
    this.name = "HarnessRunError";
  }
}

/** `pulumi up`: runs the program and applies creates, updates, replaces and deletes. */
export const up = (programDir: string, opts: RunOptions): Promise<HarnessResult> =>
  run("up", programDir, opts);
/** `pulumi preview`: runs the program with Check and Diff only; the state file is not written. */
export const preview = (programDir: string, opts: RunOptions): Promise<HarnessResult> =>
  run("preview", programDir, opts);
/** `pulumi refresh`: reads every resource in state, without running the program. */
export const refresh = (programDir: string, opts: RunOptions): Promise<HarnessResult> =>
  run("refresh", programDir, opts);
/** `pulumi destroy`: deletes every resource in state, dependants first. */
export const destroy = (programDir: string, opts: RunOptions): Promise<HarnessResult> =>
  run("destroy", programDir, opts);

async function run(command: Command, programDir: string, opts: RunOptions): Promise<HarnessResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-harness-"));
  const started = performance.now();
  try {
    const project = opts.project ?? projectName(programDir);
    const stack = opts.stack ?? "test";
    const key = (k: string): string => (k.includes(":") ? k : `${project}:${k}`);
    const config = Object.fromEntries(
      Object.entries(opts.config ?? {}).map(([k, v]) => [
        key(k),
        typeof v === "string" ? v : JSON.stringify(v),
      ]),
    );
    const args: RunnerArgs = {
      command,
      programDir: path.resolve(programDir),
      stateFile: path.resolve(opts.stateFile),
      resultFile: path.join(dir, "result.json"),
      project,
      stack,
      config,
      secretKeys: (opts.secretConfig ?? []).map(key),
      parallel: opts.parallel ?? 16,
    };
    fs.writeFileSync(path.join(dir, "args.json"), JSON.stringify(args));
    buildSync({
      entryPoints: [path.join(__dirname, "runner.ts")],
      outfile: path.join(dir, "runner.js"),
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      packages: "external",
      logLevel: "error",
    });
    const { code, log } = await spawnRunner(dir, opts);
    const partial: Omit<HarnessResult, "log" | "run"> = fs.existsSync(args.resultFile)
      ? JSON.parse(fs.readFileSync(args.resultFile, "utf8"))
      : {
          operations: [],
          outputs: {},
          secretOutputs: [],
          state: { resources: [] },
          errors: [`the runner exited with ${code} before reporting`],
          diagnostics: [],
        };
    const durationMs = Math.round(performance.now() - started);
    const result: HarnessResult = { ...partial, log, run: { command, project, stack, durationMs } };
    if (code !== 0 || result.errors.length > 0) throw new HarnessRunError(command, result);
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function spawnRunner(dir: string, opts: RunOptions): Promise<{ code: number | null; log: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  // The runner sets the config itself; a stray value from the test environment would leak in.
  delete env["PULUMI_CONFIG"];
  delete env["PULUMI_CONFIG_SECRET_KEYS"];
  const child = spawn(
    process.execPath,
    [path.join(dir, "runner.js"), path.join(dir, "args.json")],
    {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let log = "";
  const take = (d: Buffer): void => {
    log += d.toString();
    opts.onOutput?.(d.toString());
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const timer = setTimeout(() => {
    log += `\n[harness] killed after ${opts.timeoutMs ?? 120_000} ms\n`;
    const pidFile = path.join(dir, PLUGIN_PID_FILE);
    const pids = [
      child.pid,
      fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8")) : undefined,
    ];
    for (const pid of pids) {
      try {
        if (pid) process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }, opts.timeoutMs ?? 120_000);
  const pluginPid = (): number | undefined => {
    const pidFile = path.join(dir, PLUGIN_PID_FILE);
    return fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8")) : undefined;
  };
  const closePlugin = (): void => {
    const pid = pluginPid();
    if (!pid) return;
    log += "\n[harness] interrupted: SIGINT to the plugin\n";
    signalGroup(pid, "SIGINT");
    setTimeout(() => signalGroup(pid, "SIGKILL"), PLUGIN_CLOSE_GRACE_MS).unref();
  };
  opts.interrupt?.addEventListener("abort", closePlugin, { once: true });
  return new Promise((resolve, reject) => {
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(
        new SandboxIacError("internal", `cannot start the harness runner: ${err.message}`, {
          operation: "harness.run",
          cause: err,
        }),
      );
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      opts.interrupt?.removeEventListener("abort", closePlugin);
      resolve({ code, log });
    });
  });
}

/** Sends `signal` to process group `pid`; one that is gone already is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** The project name from the program's `Pulumi.yaml`, else `"test"`. */
function projectName(programDir: string): string {
  const file = path.join(programDir, "Pulumi.yaml");
  if (!fs.existsSync(file)) return "test";
  return /^name:\s*["']?([^"'\s]+)/m.exec(fs.readFileSync(file, "utf8"))?.[1] ?? "test";
}
