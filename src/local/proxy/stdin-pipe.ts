/**
 * The stdin pipe of a process in a sandbox, as the service's direct stdin
 * (direct-stdin.ts) gets it: named by the agent, which is the sandbox's and
 * so only gives a hint, and opened through descriptors only.
 * 1. The agent is asked for its own descriptor of the pipe and the pipe's
 *    inode (`AGENT_INTERNAL_ROUTES.stdinPipe`), with the caller's access
 *    token, so the agent's own check decides who may write.
 * 2. That descriptor is opened with `O_PATH` through the agent's
 *    `/proc/<pid>` directory the runtime holds (`runtime/agent-process.ts`),
 *    which nothing in the sandbox can point elsewhere. `O_PATH` opens nothing
 *    on its way: whatever the sandbox made of the number (a socket, a
 *    device, a file), nothing of it is opened.
 * 3. Only a FIFO with the inode the agent named, owned by one of the
 *    sandbox's own host uids, is then opened for writing, non-blocking: a
 *    pipe a process of the sandbox made, which any process of the sandbox
 *    could write into itself. Not one the sandbox holds from outside (a
 *    descriptor it inherited, a FIFO of another sandbox's on a shared
 *    volume), whose write side only the service could open.
 *
 * @module
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { ProcessSelector } from "../../gen/envd/process/process_pb";
import { stdinPipeAnswerOf, type StdinPipeAnswer } from "../../wire/direct-stdin";
import { AGENT_INTERNAL_ROUTES, ENVD_HEADERS } from "../../wire/envd";
import { readJsonBody } from "../../wire/json-body";
import { agentPool } from "../control/agent-pool";
import type { ReachableSandbox } from "../control/sandboxes/known-sandbox";

/** Linux's `O_PATH` (x86-64 and arm64), which `fs.constants` does not carry. */
const O_PATH = 0o10000000;
/** The most of the agent's answer read: a small JSON object. */
const ANSWER_MAX_BYTES = 4096;

/** Asks the agent for its descriptor of the stdin pipe of `selector`; undefined for any other answer. */
export function stdinPipeOf(
  target: ReachableSandbox,
  selector: ProcessSelector,
  clientHeaders: http.IncomingHttpHeaders,
): Promise<StdinPipeAnswer | undefined> {
  const query = new URLSearchParams();
  if (selector.selector.case === "pid") query.set("pid", String(selector.selector.value));
  else if (selector.selector.case === "tag") query.set("tag", selector.selector.value);
  else return Promise.resolve(undefined);
  const token = clientHeaders[ENVD_HEADERS.accessToken.toLowerCase()];
  return new Promise((resolve) => {
    const ask = http.request(
      {
        socketPath: target.processes.agentSocket,
        agent: agentPool(target.processes),
        method: "GET",
        path: `${AGENT_INTERNAL_ROUTES.stdinPipe}?${query.toString()}`,
        headers: typeof token === "string" ? { [ENVD_HEADERS.accessToken]: token } : {},
      },
      (answer) => {
        if (answer.statusCode !== 200) {
          answer.resume();
          return resolve(undefined);
        }
        // Bounded, and anything but a JSON answer (too big, cut, not JSON) is no answer.
        readJsonBody(answer, ANSWER_MAX_BYTES).then(
          (json) => resolve(stdinPipeAnswerOf(json)),
          () => resolve(undefined),
        );
      },
    );
    ask.on("error", () => resolve(undefined));
    ask.end();
  });
}

/** Host ids: the first and how many (`RuntimeSandbox.hostIds`). */
export interface HostIds {
  readonly first: number;
  readonly count: number;
}

/**
 * Opens for writing the pipe the agent holds as descriptor `answer.fd`,
 * through the agent's `/proc` directory `agentProcess`; undefined unless it
 * is a FIFO with inode `answer.ino`, owned by one of the sandbox's `hostIds`,
 * that a process still reads. Synchronous: the runtime closes `agentProcess`
 * only between turns of the event loop.
 */
export function openStdinPipe(
  agentProcess: number,
  hostIds: HostIds,
  answer: StdinPipeAnswer,
): number | undefined {
  let pathFd: number | undefined;
  try {
    pathFd = fs.openSync(`/proc/self/fd/${agentProcess}/fd/${answer.fd}`, O_PATH);
    const st = fs.fstatSync(pathFd);
    if (!st.isFIFO() || st.ino !== answer.ino) return undefined;
    if (st.uid < hostIds.first || st.uid >= hostIds.first + hostIds.count) return undefined;
    // The FIFO itself, opened anew: a write end of the same pipe, of the service's own.
    return fs.openSync(`/proc/self/fd/${pathFd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    // The agent exited, the descriptor closed, or no reader is left (ENXIO).
    return undefined;
  } finally {
    if (pathFd !== undefined) fs.closeSync(pathFd);
  }
}
