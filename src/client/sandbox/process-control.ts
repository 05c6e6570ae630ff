/**
 * The calls of the process part that address a process already running, by
 * pid or tag: writing to and closing its stdin, sending it a signal, killing
 * it. Reference: docs/envd.md#process-service.
 *
 * Its own file because these calls are alike and unlike the rest: each is
 * one unary call on a process that exists (check the selector, call, name the
 * process in the error), where starting and attaching (`process.ts`) open a
 * stream and hand it to a process handle. `ProcessApi` extends
 * {@link ProcessControlApi}, and `createProcessApi` takes these calls from
 * {@link createProcessControlApi}. The terminal part (`pty.ts`) shares
 * {@link toBytes} and {@link ProcessCallOptions}.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  Signal,
  StreamInputRequestSchema,
  type StreamInputRequest,
} from "../../gen/envd/process/process_pb";
import { invalidArgument, SandboxIacError } from "../../errors";
import { OPS } from "./constants";
import { callScope, rpcOptions, type SandboxContext } from "./context";
import { fromRpcError } from "./errors";
import { checkSelector, type ProcessSelectorInput } from "./validate";

/** Signals envd accepts. */
export type ProcessSignal = "SIGTERM" | "SIGKILL";

/** Options of calls that only address an existing process. */
export interface ProcessCallOptions {
  /** Aborts the call. @default none */
  signal?: AbortSignal | undefined;
}

/** The calls of the process part that address a running process: its stdin and its signals. */
export interface ProcessControlApi {
  /** Writes to the stdin of a process started with `stdin: true`. */
  sendInput(
    selector: ProcessSelectorInput,
    data: Uint8Array | string,
    options?: ProcessCallOptions,
  ): Promise<void>;
  /** Streams stdin in order over one client-streaming call (`StreamInput`). */
  streamInput(
    selector: ProcessSelectorInput,
    data: AsyncIterable<Uint8Array | string>,
    options?: ProcessCallOptions,
  ): Promise<void>;
  /** Closes stdin (the process sees EOF); a no-op when already closed. */
  closeStdin(selector: ProcessSelectorInput, options?: ProcessCallOptions): Promise<void>;
  /** Sends SIGTERM or SIGKILL. */
  sendSignal(
    selector: ProcessSelectorInput,
    signal: ProcessSignal,
    options?: ProcessCallOptions,
  ): Promise<void>;
  /** SIGKILLs a process; false when it does not exist (any more). */
  kill(pid: number, options?: ProcessCallOptions): Promise<boolean>;
}

const SIGNALS: Record<ProcessSignal, Signal> = { SIGTERM: Signal.SIGTERM, SIGKILL: Signal.SIGKILL };

/** Text input is sent as its UTF-8 bytes. */
export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/** How an error names the process a selector picks. */
export function describeSelector(sel: ReturnType<typeof checkSelector>): string {
  return sel.case === "pid" ? `pid ${sel.value}` : `tag ${sel.value}`;
}

/** Builds the stdin and signal calls of the process part over a shared context. */
export function createProcessControlApi(ctx: SandboxContext): ProcessControlApi {
  async function unary(
    operation: string,
    selectorInput: ProcessSelectorInput,
    options: ProcessCallOptions,
    call: (selector: ReturnType<typeof checkSelector>) => Promise<unknown>,
  ): Promise<void> {
    const selector = checkSelector(operation, selectorInput);
    try {
      await call(selector);
    } catch (err) {
      throw fromRpcError(
        err,
        callScope(ctx, operation, describeSelector(selector), options.signal),
      );
    }
  }

  return {
    sendInput(selectorInput, data, options = {}) {
      return unary(OPS.processSendInput, selectorInput, options, (selector) =>
        ctx.process.sendInput(
          { process: { selector }, input: { input: { case: "stdin", value: toBytes(data) } } },
          rpcOptions(ctx, { signal: options.signal }),
        ),
      );
    },

    streamInput(selectorInput, data, options = {}) {
      return unary(OPS.processStreamInput, selectorInput, options, (selector) => {
        async function* messages(): AsyncGenerator<StreamInputRequest> {
          yield create(StreamInputRequestSchema, {
            event: { case: "start", value: { process: { selector } } },
          });
          for await (const chunk of data) {
            yield create(StreamInputRequestSchema, {
              event: {
                case: "data",
                value: { input: { input: { case: "stdin", value: toBytes(chunk) } } },
              },
            });
          }
        }
        // A stream of input has no natural deadline; the caller's signal ends it.
        return ctx.processInput.streamInput(
          messages(),
          rpcOptions(ctx, { timeoutMs: 0, signal: options.signal }),
        );
      });
    },

    closeStdin(selectorInput, options = {}) {
      return unary(OPS.processCloseStdin, selectorInput, options, (selector) =>
        ctx.process.closeStdin(
          { process: { selector } },
          rpcOptions(ctx, { signal: options.signal }),
        ),
      );
    },

    async sendSignal(selectorInput, signal, options = {}) {
      if (!Object.hasOwn(SIGNALS, signal)) {
        throw invalidArgument(OPS.processSendSignal, "signal", signal, '"SIGTERM" or "SIGKILL"');
      }
      return unary(OPS.processSendSignal, selectorInput, options, (selector) =>
        ctx.process.sendSignal(
          { process: { selector }, signal: SIGNALS[signal] },
          rpcOptions(ctx, { signal: options.signal }),
        ),
      );
    },

    async kill(pid, options = {}) {
      try {
        await unary(OPS.processKill, pid, options, (selector) =>
          ctx.process.sendSignal(
            { process: { selector }, signal: Signal.SIGKILL },
            rpcOptions(ctx, { signal: options.signal }),
          ),
        );
        return true;
      } catch (err) {
        if (SandboxIacError.hasCode(err, "not_found")) return false;
        throw err;
      }
    },
  };
}
