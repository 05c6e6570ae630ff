/**
 * Interactive terminals: an interactive login bash on a PTY, its input and
 * resizing. Output arrives as `pty` events of the process handle.
 * Reference: docs/envd.md#process-behaviour.
 *
 * @module
 */
import { OPS, PTY_DEFAULT_ENVS, PTY_SHELL_ARGS, SHELL } from "./constants";
import { callScope, effectiveUser, rpcOptions, type SandboxContext } from "./context";
import { fromRpcError } from "./errors";
import { openProcessHandle, type ProcessHandle } from "./process-handle";
import { toBytes, type ProcessCallOptions } from "./process-control";
import {
  checkPath,
  checkPid,
  checkPtyDimension,
  checkStringMap,
  checkTimeoutMs,
  checkUser,
} from "./validate";

/** A terminal size in character cells. */
export interface PtySize {
  /** Columns, 1 to 65535. */
  cols: number;
  /** Rows, 1 to 65535. */
  rows: number;
}

/** Options of {@link PtyApi.startPty}. */
export interface PtyOptions extends PtySize {
  /** Extra environment; `TERM`, `LANG` and `LC_ALL` get defaults unless set here. @default TERM=xterm-256color, LANG=LC_ALL=C.UTF-8 */
  envs?: Record<string, string>;
  /** Working directory. @default the sandbox's default workdir, else the user's home */
  cwd?: string;
  /** Run as this user. @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** A tag to find the terminal by later. @default none */
  tag?: string;
  /** Lifetime of the shell in milliseconds; envd kills it then. @default 0, no limit */
  timeoutMs?: number | undefined;
  /** Stops receiving output (the shell keeps running). @default none */
  signal?: AbortSignal | undefined;
}

/** The terminal part of the sandbox client. */
export interface PtyApi {
  /** Starts `/bin/bash -i -l` on a pseudo-terminal; events are of type `pty`. */
  startPty(options: PtyOptions): Promise<ProcessHandle>;
  /** Types into the terminal (send `\x04` for end of input, `\x03` for Ctrl-C). */
  sendPtyInput(pid: number, data: Uint8Array | string, options?: ProcessCallOptions): Promise<void>;
  /** Changes the terminal size. */
  resizePty(pid: number, size: PtySize, options?: ProcessCallOptions): Promise<void>;
}

/** Builds the terminal part over a shared context. */
export function createPtyApi(ctx: SandboxContext): PtyApi {
  return {
    async startPty(options) {
      const op = OPS.ptyStart;
      const cols = checkPtyDimension(op, "cols", options?.cols);
      const rows = checkPtyDimension(op, "rows", options?.rows);
      const envs = { ...PTY_DEFAULT_ENVS, ...checkStringMap(op, "envs", options.envs) };
      if (options.cwd !== undefined) checkPath(op, "cwd", options.cwd);
      const timeoutMs = checkTimeoutMs(op, options.timeoutMs) ?? 0;
      const user = effectiveUser(ctx, checkUser(op, options.user));
      const controller = new AbortController();
      const onAbort = () => controller.abort(options.signal?.reason);
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const stream = ctx.process.start(
        {
          process: { cmd: SHELL, args: [...PTY_SHELL_ARGS], envs, cwd: options.cwd },
          pty: { size: { cols, rows } },
          tag: options.tag,
        },
        rpcOptions(ctx, { user, stream: true, timeoutMs, signal: controller.signal }),
      );
      return openProcessHandle(
        stream,
        controller,
        { operation: op, sandboxID: ctx.sandboxID, signal: controller.signal },
        () => options.signal?.removeEventListener("abort", onAbort),
      );
    },

    async sendPtyInput(pid, data, options = {}) {
      checkPid(OPS.ptySendInput, pid);
      try {
        await ctx.process.sendInput(
          {
            process: { selector: { case: "pid", value: pid } },
            input: { input: { case: "pty", value: toBytes(data) } },
          },
          rpcOptions(ctx, { signal: options.signal }),
        );
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.ptySendInput, `pid ${pid}`, options.signal));
      }
    },

    async resizePty(pid, size, options = {}) {
      checkPid(OPS.ptyResize, pid);
      const cols = checkPtyDimension(OPS.ptyResize, "cols", size?.cols);
      const rows = checkPtyDimension(OPS.ptyResize, "rows", size?.rows);
      try {
        await ctx.process.update(
          { process: { selector: { case: "pid", value: pid } }, pty: { size: { cols, rows } } },
          rpcOptions(ctx, { signal: options.signal }),
        );
      } catch (err) {
        throw fromRpcError(err, callScope(ctx, OPS.ptyResize, `pid ${pid}`, options.signal));
      }
    },
  };
}
