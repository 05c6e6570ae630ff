/**
 * The template build steps (`RUN`, `COPY`, `ENV`, `WORKDIR`, `USER`) run
 * against the build sandbox's agent. Each step updates the build state the
 * next one starts from, as a Dockerfile would.
 *
 * @module
 */
import * as fs from "node:fs";
import { SandboxIacError } from "../../../errors";
import type { AgentClient } from "../agent-client";
import { randomID } from "../../../wire/ids";
import { shellWord } from "../../../wire/shell-word";
import { copyScript, ensureUserScript, workdirScript } from "./shell";
import { STDERR_TAIL_CHARS } from "./constants";
import type { LogLevel } from "./model";

/** One step as the SDK sends it (unknown fields already dropped). */
export interface TemplateStep {
  type: string;
  args: string[];
  filesHash?: string | undefined;
  force?: boolean | undefined;
}

/** What the steps read and change while a build runs. */
export interface BuildState {
  /** The build sandbox's agent; none for steps that need no sandbox (`ENV`). */
  agent: AgentClient | undefined;
  /** Accumulated environment (parent template plus `ENV` steps). */
  envs: Record<string, string>;
  /** The current user (parent default, then `USER` steps). */
  user: string;
  /** The current working directory (parent default, then `WORKDIR` steps). */
  workdir: string | undefined;
  /** Appends a line to the build log, tagged with the running step. */
  log(level: LogLevel, message: string): void;
  /** The stored archive of a files hash, when uploaded. */
  findFiles(hash: string): string | undefined;
}

/** A step failed; `message` is what the SDK shows the user. */
export class StepFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StepFailure";
  }
}

const ROOT = "root";

/** Runs one step, or throws a {@link StepFailure}. */
export async function runStep(step: TemplateStep, state: BuildState): Promise<void> {
  switch (step.type.toUpperCase()) {
    case "RUN":
      return runCommand(step, state);
    case "COPY":
      return copyFiles(step, state);
    case "ENV":
      return setEnv(step, state);
    case "WORKDIR":
      return setWorkdir(step, state);
    case "USER":
      return setUser(step, state);
    default:
      throw new StepFailure(
        `unsupported step type ${JSON.stringify(step.type)}: the local service runs RUN, COPY, ENV, WORKDIR and USER steps`,
      );
  }
}

/** The build sandbox's agent; every step but `ENV` runs with one. */
function agentOf(state: BuildState): AgentClient {
  if (state.agent) return state.agent;
  throw new SandboxIacError("internal", "a build step that changes files ran without a sandbox", {
    operation: "templates.build",
  });
}

/** Runs `cmd` as `user`, streaming its output lines into the build log. */
async function exec(
  state: BuildState,
  cmd: string,
  user: string,
  opts: { logOutput: boolean; cwd?: string | undefined },
) {
  const pending = { stdout: "", stderr: "" };
  const emit = (stream: "stdout" | "stderr", text: string, final: boolean) => {
    const lines = (pending[stream] + text).split("\n");
    pending[stream] = final ? "" : (lines.pop() ?? "");
    for (const line of lines) if (line.length > 0 || !final) state.log("info", line);
  };
  const handle = await agentOf(state).start(cmd, {
    user,
    envs: state.envs,
    // An empty workdir means none, as the agent's default applies.
    cwd: opts.cwd || undefined,
  });
  const result = await handle.wait(
    opts.logOutput
      ? {
          onStdout: (text) => emit("stdout", text, false),
          onStderr: (text) => emit("stderr", text, false),
        }
      : {},
  );
  if (opts.logOutput) {
    if (pending.stdout) emit("stdout", "", true);
    if (pending.stderr) emit("stderr", "", true);
  }
  return result;
}

/** Runs a helper script as root and fails the step with its stderr when it fails. */
async function asRoot(state: BuildState, what: string, script: string): Promise<string> {
  const r = await exec(state, script, ROOT, { logOutput: false, cwd: "/" });
  if (r.exitCode !== 0) {
    throw new StepFailure(
      `${what} failed with exit code ${r.exitCode}: ${tail(r.stderr || r.stdout)}`,
    );
  }
  return r.stdout;
}

async function runCommand(step: TemplateStep, state: BuildState): Promise<void> {
  const cmd = step.args[0];
  if (!cmd) throw new StepFailure("RUN needs a command: args[0] is empty");
  const user = step.args[1] || state.user;
  const r = await exec(state, cmd, user, { logOutput: true, cwd: state.workdir });
  if (r.exitCode !== 0) {
    throw new StepFailure(
      `command ${JSON.stringify(cmd)} failed with exit code ${r.exitCode}: ${tail(r.stderr) || "(no stderr)"}`,
    );
  }
}

async function copyFiles(step: TemplateStep, state: BuildState): Promise<void> {
  const [src, dest, user, mode] = step.args;
  if (!src || !dest)
    throw new StepFailure(
      `COPY needs a source and a destination, got ${JSON.stringify(step.args)}`,
    );
  if (mode && !/^[0-7]{3,4}$/.test(mode))
    throw new StepFailure(`COPY mode must be octal like 0755, got ${JSON.stringify(mode)}`);
  const hash = step.filesHash;
  const archive = hash ? state.findFiles(hash) : undefined;
  if (!hash || !archive) {
    throw new StepFailure(
      `COPY ${src} ${dest}: the files (hash ${hash ?? "missing"}) were never uploaded: upload them through GET /templates/{templateID}/files/{hash} before starting the build`,
    );
  }
  const stage = `/tmp/.sandbox-iac-copy-${randomID(12)}`;
  await asRoot(state, "preparing the COPY staging folder", `mkdir -p -- ${shellWord(stage)}`);
  await agentOf(state).extract(stage, fs.createReadStream(archive), ROOT);
  const owner = user || state.user;
  await asRoot(
    state,
    `COPY ${src} ${dest}`,
    copyScript({ stage, src, dest, base: state.workdir, owner, mode: mode ?? "" }),
  );
}

async function setEnv(step: TemplateStep, state: BuildState): Promise<void> {
  if (step.args.length % 2 !== 0) {
    throw new StepFailure(
      `ENV needs key/value pairs, got an odd number of args: ${JSON.stringify(step.args)}`,
    );
  }
  for (let i = 0; i < step.args.length; i += 2) {
    const key = step.args[i];
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      throw new StepFailure(
        `ENV name must match [A-Za-z_][A-Za-z0-9_]*, got ${JSON.stringify(key)}`,
      );
    state.envs[key] = step.args[i + 1]!;
  }
}

async function setWorkdir(step: TemplateStep, state: BuildState): Promise<void> {
  const dir = step.args[0];
  if (!dir) throw new StepFailure("WORKDIR needs a path: args[0] is empty");
  state.workdir = await asRoot(
    state,
    `WORKDIR ${dir}`,
    workdirScript(dir, state.workdir, state.user),
  );
}

async function setUser(step: TemplateStep, state: BuildState): Promise<void> {
  const user = step.args[0];
  if (!user || !/^[a-z_][a-z0-9_-]*\$?$/.test(user)) {
    throw new StepFailure(
      `USER must be a user name like 'user' or 'app', got ${JSON.stringify(user ?? "")}`,
    );
  }
  await asRoot(state, `creating user ${user}`, ensureUserScript(user));
  state.user = user;
}

/** The end of a command's output, for error messages. */
export function tail(text: string): string {
  const t = text.trim();
  return t.length > STDERR_TAIL_CHARS ? `...${t.slice(-STDERR_TAIL_CHARS)}` : t;
}
