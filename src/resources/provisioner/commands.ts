/**
 * Runs the setup commands in order, streaming their output to the user's log
 * as it happens. The first non-zero exit stops the run with the command, the
 * exit code, the tail of its output and the sandbox id.
 *
 * @module
 */
import type { ProcessResult, SandboxClient } from "../../client/sandbox";
import { commandFailed } from "../../client/sandbox/errors";
import { SandboxIacError } from "../../errors";
import { joinRunLines } from "../core/run-lines";
import type { CommandSpec } from "./provisioner.args";
import { stopOnService, throwIfStopped } from "../core/stop";

/** Default command timeout, in seconds. */
const DEFAULT_COMMAND_TIMEOUT_SECONDS = 600;

/** What one command printed and how it ended. */
export interface CommandOutcome {
  exitCode: number;
}

/** A printable form of a command, for logs and errors. */
function describeCommand(spec: CommandSpec): string {
  return spec.run !== undefined
    ? joinRunLines(spec.run)
    : [spec.cmd, ...(spec.args ?? [])].join(" ");
}

function splitLines(
  prefix: string,
  log: (line: string) => void,
): { push(text: string): void; flush(): void } {
  let pending = "";
  return {
    push(text) {
      pending += text;
      let nl = pending.indexOf("\n");
      while (nl >= 0) {
        log(`${prefix}${pending.slice(0, nl)}`);
        pending = pending.slice(nl + 1);
        nl = pending.indexOf("\n");
      }
    },
    flush() {
      if (pending) log(`${prefix}${pending}`);
      pending = "";
    },
  };
}

/** Kills command `pid` of a stopped run (without the fired signal); a failure is logged, not thrown. */
async function killStopped(
  sandbox: SandboxClient,
  pid: number,
  shown: string,
  log: (line: string) => void,
): Promise<void> {
  const what = `kill command ${JSON.stringify(shown)} (pid ${pid}) in sandbox ${sandbox.sandboxID}`;
  await stopOnService({ log }, what, () => sandbox.kill(pid));
}

/** The error of a run stopped while `shown` ran: the stop's own reason is its cause. */
function stoppedDuring(shown: string, sandboxID: string, reason: unknown): SandboxIacError {
  return new SandboxIacError(
    "canceled",
    `stopped while command ${JSON.stringify(shown)} ran in sandbox ${sandboxID}; the command was killed`,
    { operation: "provisioner.commands", resourceId: sandboxID, cause: reason },
  );
}

/**
 * Runs every command in order; throws `command_failed` on the first failure.
 * When `signal` fires, the command in flight is killed in the sandbox.
 */
export async function runCommands(
  sandbox: SandboxClient,
  commands: readonly CommandSpec[],
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<CommandOutcome[]> {
  const outcomes: CommandOutcome[] = [];
  for (const [index, spec] of commands.entries()) {
    const shown = describeCommand(spec);
    const timeoutSeconds = spec.timeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS;
    if (signal) {
      const what = `command ${JSON.stringify(shown)} in sandbox ${sandbox.sandboxID}`;
      throwIfStopped({ signal }, "provisioner.commands", what);
    }
    log(`[${index + 1}/${commands.length}] $ ${shown}`);
    // Started without the stop's signal: a start is short, and one stopped
    // before its answer would leave the command running under a pid never
    // learned (core/stop.ts: a call that creates something is let finish).
    const handle = await sandbox.start(spec.run !== undefined ? joinRunLines(spec.run) : spec.cmd, {
      ...(spec.cmd !== undefined ? { args: spec.args ?? [] } : {}),
      cwd: spec.cwd,
      envs: spec.envs,
      user: spec.user,
      timeoutMs: timeoutSeconds * 1000,
    });
    const out = splitLines("  | ", log);
    const err = splitLines("  ! ", log);
    // A stop drops the output stream; the command is then killed below.
    const onStop = () => handle.disconnect();
    if (signal?.aborted) onStop();
    else signal?.addEventListener("abort", onStop, { once: true });
    let result: ProcessResult;
    try {
      result = await handle.wait({
        onStdout: (text) => out.push(text),
        onStderr: (text) => err.push(text),
      });
    } catch (cause) {
      // Stopped (core/stop.ts): the command is killed, not left running in the
      // sandbox (envd keeps a process whose stream was dropped, as E2B's does).
      if (signal?.aborted) {
        await killStopped(sandbox, handle.pid, shown, log);
        throw stoppedDuring(shown, sandbox.sandboxID, signal.reason);
      }
      // The client's timeout error speaks of `timeoutMs`; the user wrote `timeoutSeconds`.
      if (SandboxIacError.hasCode(cause, "timeout")) {
        throw new SandboxIacError(
          "timeout",
          `command ${JSON.stringify(shown)} ran longer than its timeoutSeconds (${timeoutSeconds}) in sandbox ${sandbox.sandboxID} and was killed: raise the command's timeoutSeconds (at most 86400) or make it finish sooner`,
          { operation: "provisioner.commands", resourceId: sandbox.sandboxID, cause },
        );
      }
      throw cause;
    } finally {
      signal?.removeEventListener("abort", onStop);
    }
    out.flush();
    err.flush();
    const { exitCode } = result;
    if (exitCode !== 0) {
      throw commandFailed(shown, result, {
        operation: "provisioner.commands",
        sandboxID: sandbox.sandboxID,
        pid: handle.pid,
        status: result.status,
      });
    }
    outcomes.push({ exitCode });
  }
  return outcomes;
}
