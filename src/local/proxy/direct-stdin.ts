/**
 * A binary `process.Process/StreamInput` (the Provisioner's archive into
 * `tar -x`) written by the service straight into the process's stdin pipe,
 * instead of relayed to the agent, which then wrote it into the pipe: the
 * agent spent about as much CPU on it as the service (bench/provisioner.js).
 *
 * The call's first message (its start event, naming the process) is read;
 * the pipe is then had from the agent and opened through descriptors only
 * (stdin-pipe.ts). Anything else (no such process, a PTY, the agent's own
 * writes queued, a check failing, an agent that does not know the route)
 * relays the call to the agent with the bytes read so far, and the agent
 * answers it as it would. A written call is served and answered as the agent
 * serves it (src/wire/stdin-stream-serve.ts).
 *
 * @module
 */
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type * as http from "node:http";
import * as net from "node:net";
import {
  StreamInputRequestSchema,
  type ProcessSelector,
  type StreamInputRequest,
} from "../../gen/envd/process/process_pb";
import { drainWhenAnswered } from "../../wire/early-answer";
import { RPC_MAX_BODY_BYTES } from "../../wire/envd";
import { isBinaryStdinStream, requestEncoding } from "../../wire/rpc-request";
import type { ScavengeEvery } from "../../wire/scavenge";
import { StdinFrameReader } from "../../wire/stdin-frame-reader";
import { drainedOf, serveStdinStream, type StdinTarget } from "../../wire/stdin-stream-serve";
import { CORS_HEADERS } from "../control/cors";
import type { ReachableSandbox } from "../control/sandboxes/known-sandbox";
import type { SandboxManager } from "../control/sandboxes/manager";
import { openStdinPipe, stdinPipeOf } from "./stdin-pipe";

/** Most bytes read while waiting for the start event before the call is left to the agent. */
const START_MAX_BYTES = 64 * 1024;

/**
 * True for a call this module takes: a binary, uncompressed `StreamInput`
 * POST (JSON's stdin is base64; a compressed one the agent refuses).
 */
export function isDirectStdinCall(req: http.IncomingMessage, pathname: string): boolean {
  return (
    req.method === "POST" &&
    isBinaryStdinStream(req, pathname) &&
    requestEncoding(req) === undefined
  );
}

/** What {@link serveDirectStdin} needs besides the request. */
export interface DirectStdinOptions {
  manager: SandboxManager;
  target: ReachableSandbox;
  /** Counts the upload's bytes towards the service's scavenges (forward.ts). */
  scavenges: ScavengeEvery;
  /** Relays the call to the agent, sending `read` (the body's bytes read so far) first. */
  relay: (read: Buffer[]) => void;
  /** Answers the call once its sandbox was cut (killed, paused), as the relay does. */
  answerCut: () => void;
}

/**
 * Serves one call {@link isDirectStdinCall} took: written into the pipe, or
 * relayed to the agent when the pipe cannot be had.
 */
export function serveDirectStdin(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: DirectStdinOptions,
): void {
  if (options.target.processes.agentProcess === undefined) return options.relay([]);
  const read: Buffer[] = [];
  let readBytes = 0;
  let start: ProcessSelector | undefined | null = null;
  const probe = new StdinFrameReader(RPC_MAX_BODY_BYTES);
  const leave = (): void => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.pause();
  };
  const onData = (chunk: Buffer): void => {
    read.push(chunk);
    readBytes += chunk.length;
    try {
      probe.push(chunk, {
        stdin: () => (start ??= undefined),
        message: (flags, bytes) => {
          if (start !== null) return;
          start = flags === 0 ? startOf(bytes) : undefined;
        },
      });
    } catch {
      start ??= undefined;
    }
    if (start === null && readBytes < START_MAX_BYTES) return;
    leave();
    const selector = start ?? undefined;
    if (!selector) return options.relay(read);
    void stdinPipeOf(options.target, selector, req.headers).then((answer) => {
      // The client gone meanwhile: nothing to write, nobody to answer.
      if (req.destroyed) return;
      // Read again, now: a sandbox stopped meanwhile closed it, and its number may name another file.
      const agentProcess = options.target.processes.agentProcess;
      const fd =
        answer && agentProcess !== undefined
          ? openStdinPipe(agentProcess, options.target.processes.hostIds, answer)
          : undefined;
      if (fd === undefined) return options.relay(read);
      writeInto(fd, read, req, res, options);
    });
  };
  const onEnd = (): void => {
    leave();
    options.relay(read);
  };
  // The relay and the served call take errors over; until then a reset client is no crash.
  req.on("error", () => undefined);
  req.on("data", onData);
  req.on("end", onEnd);
}

/** The process a start event names, or undefined when `bytes` is not one. */
function startOf(bytes: Uint8Array): ProcessSelector | undefined {
  let request: StreamInputRequest;
  try {
    request = fromBinary(StreamInputRequestSchema, bytes);
  } catch {
    return undefined;
  }
  return request.event.case === "start" ? request.event.value.process : undefined;
}

/**
 * Serves the call into the pipe `fd` (src/wire/stdin-stream-serve.ts, as the
 * agent serves it), from the bytes `read` so far on: answered once the body
 * has ended and the pipe has taken it all, or at the first error.
 */
function writeInto(
  fd: number,
  read: Buffer[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: DirectStdinOptions,
): void {
  const { manager, target } = options;
  const pipe = new net.Socket({ fd, readable: false, writable: true });
  let broken = false;
  // The agent's wording for input its process no longer takes (src/agent/process/selection.ts).
  const closed = () => new ConnectError("stdin not enabled or closed", Code.Internal);
  pipe.on("error", () => {
    broken = true;
    pipe.destroy();
  });
  let started = false;
  const write = (bytes: Uint8Array): void => {
    if (broken) throw closed();
    pipe.write(bytes);
  };
  const stdinTarget: StdinTarget = {
    start() {
      // The first names the pipe's process; the agent would take a later one as another.
      if (started)
        throw new ConnectError(
          "a binary StreamInput call names its process once: make another call for another process",
          Code.InvalidArgument,
        );
      started = true;
    },
    stdin: write,
    input(input) {
      if (input?.case === "pty")
        throw new ConnectError("process has no pty: send stdin input instead", Code.Internal);
      if (input?.case === "stdin") write(input.value);
    },
    full: () => pipe.writableNeedDrain,
    drained: () => drainedOf(pipe),
    // Closed once written: the process sees the end of its input only once the agent's end closes too.
    finish: () =>
      new Promise<void>((resolve, reject) => {
        if (broken) return reject(closed());
        pipe.once("close", () => reject(closed()));
        pipe.end(() => (broken ? reject(closed()) : resolve()));
      }),
    close: () => pipe.destroy(),
  };
  const untrack = manager.trackConnection(target.record.sandboxID, {
    cut() {
      pipe.destroy();
      options.answerCut();
    },
  });
  res.on("close", untrack);
  drainWhenAnswered(req, res);
  serveStdinStream(req, res, {
    readMaxBytes: RPC_MAX_BODY_BYTES,
    target: stdinTarget,
    scavenges: options.scavenges,
    headers: CORS_HEADERS,
    read,
  });
}
