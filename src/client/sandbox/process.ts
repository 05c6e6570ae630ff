/**
 * `process.Process`: start, run, connect, list, input, signals.
 * Reference: docs/envd.md#process-service.
 *
 * This file starts and attaches to processes (calls whose answer is a
 * stream, handed to `process-handle.ts`) and lists them; the calls on a
 * running process, its stdin and signals, are `process-control.ts`.
 *
 * @module
 */
import { invalidArgument } from "../../errors";
import { OPS, SHELL, SHELL_ARGS } from "./constants";
import { effectiveUser, rpcOptions, type SandboxContext } from "./context";
import { commandFailed, fromRpcError } from "./errors";
import { retryIdempotent } from "./idempotent";
import { openProcessHandle, type ProcessHandle, type ProcessResult } from "./process-handle";
import {
  createProcessControlApi,
  describeSelector,
  type ProcessCallOptions,
  type ProcessControlApi,
} from "./process-control";
import {
  checkCommand,
  checkPath,
  checkSelector,
  checkStringMap,
  checkTimeoutMs,
  checkUser,
  type ProcessSelectorInput,
} from "./validate";

/** Options of {@link ProcessApi.start} and {@link ProcessApi.run}. */
export interface StartOptions {
  /**
   * Arguments; when given, `cmd` is the program and runs exactly with them.
   * @default none: `cmd` is a shell line run by `/bin/bash -l -c`
   */
  args?: string[];
  /** Extra environment variables; they win over the sandbox's. @default none */
  envs?: Record<string, string> | undefined;
  /** Working directory; relative paths resolve against the user's home. @default the sandbox's default workdir, else the user's home */
  cwd?: string | undefined;
  /** Run as this user. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** A tag to find the process by later (`{ tag }` selectors). @default none */
  tag?: string;
  /** Keep stdin open as a pipe for sendInput/streamInput. @default false: stdin is /dev/null */
  stdin?: boolean;
  /**
   * Lifetime of the process in milliseconds (`Connect-Timeout-Ms`): envd kills it
   * when this expires and the call fails with `timeout`. 0 means no limit.
   * @default 0, no limit
   */
  timeoutMs?: number | undefined;
  /** Stops waiting (the process keeps running). @default none */
  signal?: AbortSignal | undefined;
}

/** A process as listed by {@link ProcessApi.list}. */
export interface ProcessInfo {
  pid: number;
  tag: string | undefined;
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd: string | undefined;
}

/** Options of {@link ProcessApi.connect}. */
export interface ConnectOptions extends ProcessCallOptions {
  /** Deadline of the attached stream in milliseconds (the process is not killed). @default 0, no limit */
  timeoutMs?: number | undefined;
}

/** The process part of the sandbox client. */
export interface ProcessApi extends ProcessControlApi {
  /** Starts a process; resolves once it runs, with its pid. Never retried. */
  start(cmd: string, options?: StartOptions): Promise<ProcessHandle>;
  /** Starts a process and waits for it; fails with `command_failed` on a non-zero exit. */
  run(cmd: string, options?: StartOptions): Promise<ProcessResult>;
  /** Attaches to a running process: live output only, nothing is replayed. */
  connect(selector: ProcessSelectorInput, options?: ConnectOptions): Promise<ProcessHandle>;
  /** The live processes. Retried when transient. */
  list(options?: ProcessCallOptions): Promise<ProcessInfo[]>;
}

/** The command line a caller would recognise, for error messages. */
function describeCommand(cmd: string, args: string[] | undefined): string {
  return args ? [cmd, ...args].join(" ") : cmd;
}

/** Builds the process part over a shared context. */
export function createProcessApi(ctx: SandboxContext): ProcessApi {
  function linkedController(signal: AbortSignal | undefined) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    return { controller, release: () => signal?.removeEventListener("abort", onAbort) };
  }

  async function start(cmd: string, options: StartOptions = {}): Promise<ProcessHandle> {
    const op = OPS.processStart;
    checkCommand(op, cmd);
    if (
      options.args !== undefined &&
      (!Array.isArray(options.args) || options.args.some((a) => typeof a !== "string"))
    ) {
      throw invalidArgument(op, "args", options.args, "an array of strings");
    }
    const envs = checkStringMap(op, "envs", options.envs);
    if (options.cwd !== undefined) checkPath(op, "cwd", options.cwd);
    const timeoutMs = checkTimeoutMs(op, options.timeoutMs) ?? 0;
    const user = effectiveUser(ctx, checkUser(op, options.user));
    const { controller, release } = linkedController(options.signal);
    const process = options.args
      ? { cmd, args: options.args, envs, cwd: options.cwd }
      : { cmd: SHELL, args: [...SHELL_ARGS, cmd], envs, cwd: options.cwd };
    const stream = ctx.process.start(
      { process, tag: options.tag, stdin: options.stdin ?? false },
      rpcOptions(ctx, { user, stream: true, timeoutMs, signal: controller.signal }),
    );
    return openProcessHandle(
      stream,
      controller,
      {
        operation: op,
        sandboxID: ctx.sandboxID,
        resourceId: describeCommand(cmd, options.args),
        signal: controller.signal,
      },
      release,
    );
  }

  return {
    start,

    async run(cmd, options = {}) {
      const handle = await start(cmd, options);
      const result = await handle.wait();
      if (result.exitCode !== 0) {
        throw commandFailed(describeCommand(cmd, options.args), result, {
          operation: OPS.processRun,
          sandboxID: ctx.sandboxID,
          pid: handle.pid,
          status: result.status,
        });
      }
      return result;
    },

    async connect(selectorInput, options = {}) {
      const op = OPS.processConnect;
      const selector = checkSelector(op, selectorInput);
      const timeoutMs = checkTimeoutMs(op, options.timeoutMs) ?? 0;
      const { controller, release } = linkedController(options.signal);
      const stream = ctx.process.connect(
        { process: { selector } },
        rpcOptions(ctx, { stream: true, timeoutMs, signal: controller.signal }),
      );
      return openProcessHandle(
        stream,
        controller,
        {
          operation: op,
          sandboxID: ctx.sandboxID,
          resourceId: describeSelector(selector),
          signal: controller.signal,
        },
        release,
      );
    },

    async list(options = {}) {
      const res = await retryIdempotent(async () => {
        try {
          return await ctx.process.list({}, rpcOptions(ctx, { signal: options.signal }));
        } catch (err) {
          throw fromRpcError(err, {
            operation: OPS.processList,
            sandboxID: ctx.sandboxID,
            signal: options.signal,
          });
        }
      }, options.signal);
      return res.processes.map((p) => ({
        pid: p.pid,
        tag: p.tag,
        cmd: p.config?.cmd ?? "",
        args: p.config?.args ?? [],
        envs: { ...(p.config?.envs ?? {}) },
        cwd: p.config?.cwd,
      }));
    },

    // Input and signals of a running process (process-control.ts).
    ...createProcessControlApi(ctx),
  };
}
