/**
 * The `process.Process` Connect service (docs/envd.md#process-service).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  ProcessEventSchema,
  Signal,
  type Process,
  type ProcessEvent,
} from "../../gen/envd/process/process_pb";
import { DEFAULT_KEEPALIVE_SECONDS, ENVD_HEADERS } from "../../wire/envd";
import { EventQueue, keepaliveIntervalMs } from "../event-queue";
import { rpcUser } from "../rpc-context";
import type { AgentState } from "../state";
import type { ManagedProcess } from "./managed-process";
import type { ProcessRegistry } from "./registry";
import { liveOnly, select, sendInput } from "./selection";
import { startProcess } from "./spawn";
import { StdinMemory } from "./stdin-memory";

/** How long SendSignal(SIGKILL) waits for the process to be reaped before answering. */
const KILL_REAP_WAIT_MS = 5_000;

/** Streams `proc`'s events to one caller: start, live output and keepalives, end. */
async function* follow(
  proc: ManagedProcess,
  ctx: HandlerContext,
): AsyncGenerator<{ event: ProcessEvent }> {
  const queue = new EventQueue<ProcessEvent>();
  const keepalive = create(ProcessEventSchema, { event: { case: "keepalive", value: {} } });
  queue.keepalive(
    keepaliveIntervalMs(
      ctx.requestHeader.get(ENVD_HEADERS.keepalivePingInterval),
      DEFAULT_KEEPALIVE_SECONDS,
    ),
    () => keepalive,
  );
  proc.subscribe(queue);
  // A disconnect (or the deadline) ends only this stream, never the process.
  const onAbort = () => queue.fail(ConnectError.from(ctx.signal.reason));
  ctx.signal.addEventListener("abort", onAbort);
  try {
    yield { event: proc.startEvent() };
    for await (const event of queue) yield { event };
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    proc.unsubscribe(queue);
  }
}

/** Builds the Process service implementation over `registry`. */
export function processService(
  state: AgentState,
  registry: ProcessRegistry,
): ServiceImpl<typeof Process> {
  return {
    async list() {
      return {
        processes: registry.live().map((p) => ({ config: p.config, pid: p.pid, tag: p.tag })),
      };
    },

    async *start(req, ctx) {
      const user = rpcUser(state, ctx);
      const proc = await startProcess(state, user, req);
      registry.add(proc);
      const timeoutMs = ctx.timeoutMs();
      if (timeoutMs !== undefined && timeoutMs > 0) proc.killAfter(timeoutMs);
      yield* follow(proc, ctx);
    },

    async *connect(req, ctx) {
      yield* follow(select(registry, req.process), ctx);
    },

    async update(req) {
      const proc = liveOnly(registry, req.process);
      if (req.pty?.size) {
        if (!proc.isPty) throw new ConnectError("tty not assigned", Code.Internal);
        proc.resize(req.pty.size.cols, req.pty.size.rows);
      }
      return {};
    },

    async sendInput(req) {
      const proc = liveOnly(registry, req.process);
      sendInput(proc, req.input?.input);
      return {};
    },

    async streamInput(requests) {
      let proc: ManagedProcess | undefined;
      // The process's take of the message written last. The next message is
      // read and decoded while it drains, and written once it has: a bulk
      // stream (an archive into tar) is held back by the process, as envd's
      // blocking pipe write does, with at most one message queued in the
      // agent. Waiting for the drain before reading on left the pipe empty
      // while each next message was gathered from the socket, and `tar`
      // idle for that time (bench/provisioner.js).
      let taken: Promise<void> = Promise.resolve();
      // Frees each message's bytes once the pipe has taken them (see stdin-memory.ts).
      const memory = new StdinMemory();
      for await (const req of requests) {
        if (req.event.case === "start") proc = liveOnly(registry, req.event.value.process);
        else if (req.event.case === "data") {
          if (!proc)
            throw new ConnectError(
              "stream input must start with a start event",
              Code.FailedPrecondition,
            );
          await taken;
          memory.taken();
          const input = req.event.value.input?.input;
          sendInput(proc, input);
          // A PTY's write has no drain to wait for: its bytes are left to V8.
          if (input?.case === "stdin" && !proc.isPty) memory.wrote(input.value);
          taken = proc.drained();
        }
      }
      await taken;
      memory.taken();
      return {};
    },

    async sendSignal(req) {
      const proc = liveOnly(registry, req.process);
      if (req.signal === Signal.SIGKILL) {
        // Answer only once the pid is gone, so a `kill -0 <pid>` right after fails.
        proc.signal("SIGKILL");
        await proc.waitReaped(KILL_REAP_WAIT_MS);
      } else if (req.signal === Signal.SIGTERM) proc.signal("SIGTERM");
      else throw new ConnectError(`invalid signal: ${req.signal}`, Code.Unimplemented);
      return {};
    },

    async closeStdin(req) {
      const proc = liveOnly(registry, req.process);
      if (proc.isPty) {
        throw new ConnectError(
          "cannot close stdin for PTY process: send Ctrl+D (0x04) instead",
          Code.Unknown,
        );
      }
      proc.closeStdin();
      return {};
    },
  };
}
