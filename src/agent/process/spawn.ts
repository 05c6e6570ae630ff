/**
 * Turns a StartRequest into a running {@link ManagedProcess}: environment,
 * working directory and user exactly as envd (docs/envd.md#process-behaviour).
 *
 * @module
 */
import { Code, ConnectError } from "@connectrpc/connect";
import * as fs from "node:fs";
import type { StartRequest } from "../../gen/envd/process/process_pb";
import { DEFAULT_PATH } from "../constants";
import { PathError, resolvePath } from "../paths";
import { globalEnv, type AgentState } from "../state";
import type { SandboxUser } from "../users";
import { spawnPty, type SpawnSpec } from "./backend";
import { ManagedProcess } from "./managed-process";
import { agentSpawner } from "./spawner";
import { spawnThroughSpawner } from "./spawner-backend";
import { SandboxIacError } from "../../errors";

/** The environment of a new process; later groups win. */
export function processEnv(
  state: AgentState,
  user: SandboxUser,
  requestEnvs: Record<string, string>,
): Record<string, string> {
  return {
    PATH: DEFAULT_PATH,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    ...globalEnv(state),
    ...requestEnvs,
  };
}

/** The working directory of a new process; `invalid_argument` when missing. */
export function processCwd(state: AgentState, user: SandboxUser, cwd: string | undefined): string {
  let dir: string;
  try {
    dir = resolvePath(cwd ?? "", user, state.settings.defaultWorkdir);
  } catch (err) {
    if (err instanceof PathError) throw new ConnectError(err.message, Code.InvalidArgument);
    throw err;
  }
  let isDir = false;
  try {
    isDir = fs.statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new ConnectError(`cwd '${dir}' does not exist`, Code.InvalidArgument);
  return dir;
}

/** `invalid_argument` when a string bound for execve holds a NUL byte, which it cannot carry. */
function refuseNul(field: string, values: string[]): void {
  const bad = values.find((v) => v.includes("\0"));
  if (bad !== undefined) {
    throw new ConnectError(
      `${field} contains a NUL byte ('${bad.replace(/\0/g, "\\0").slice(0, 64)}'), which no program argument or environment variable can hold: remove it`,
      Code.InvalidArgument,
    );
  }
}

/**
 * Starts the process `req` describes as `user`: with pipes through the
 * agent's spawner (no fork of the agent), or on a PTY through node-pty.
 */
export async function startProcess(
  state: AgentState,
  user: SandboxUser,
  req: StartRequest,
): Promise<ManagedProcess> {
  const config = req.process;
  if (!config || config.cmd === "")
    throw new ConnectError("process.cmd is required", Code.InvalidArgument);
  refuseNul("process.cmd", [config.cmd]);
  refuseNul("process.args", config.args);
  refuseNul("process.envs", Object.entries(config.envs).flat());
  const spec: SpawnSpec = {
    cmd: config.cmd,
    args: config.args,
    env: processEnv(state, user, config.envs),
    cwd: processCwd(state, user, config.cwd),
    uid: user.uid,
    gid: user.gid,
    stdin: req.stdin ?? true,
    pty: req.pty?.size ? { cols: req.pty.size.cols, rows: req.pty.size.rows } : undefined,
  };
  const proc = new ManagedProcess(config, req.tag);
  const events = {
    onOutput: (kind: "stdout" | "stderr" | "pty", chunk: Buffer) => proc.output(kind, chunk),
    onEnd: (end: Parameters<ManagedProcess["finish"]>[0]) => proc.finish(end),
  };
  try {
    proc.attach(
      req.pty
        ? spawnPty({ ...spec, stdin: true }, events)
        : await spawnThroughSpawner(agentSpawner(), spec, events),
    );
  } catch (err) {
    throw new ConnectError(
      `failed to start process: ${SandboxIacError.from(err, { operation: "process.start" }).reason}`,
      Code.Internal,
    );
  }
  return proc;
}
