/**
 * A build's last phase before its top layer is captured: the start command
 * left running in the background and the ready command retried until it
 * succeeds, as a sandbox start from the template would run them.
 *
 * @module
 */
import type { AgentClient } from "../agent-client";
import { BUILD_STEP, READY_CMD_RETRY_MS, READY_CMD_TIMEOUT_MS } from "./constants";
import type { LogLevel } from "./model";
import { StepFailure, tail } from "./build-steps";
import type { StepState } from "./step-cache";

/** The commands of a build's finalize phase (`setStartCmd(start, ready)`). */
export interface FinalizeCommands {
  startCmd?: string | undefined;
  readyCmd?: string | undefined;
}

/**
 * Runs `startCmd` in the background and waits for `readyCmd` to exit 0,
 * with the build's user, envs and workdir; a ready command that never
 * succeeds within {@link READY_CMD_TIMEOUT_MS} fails the build with its last
 * exit code and stderr.
 */
export async function finalizeBuild(
  agent: AgentClient,
  state: StepState,
  plan: FinalizeCommands,
  logLine: (level: LogLevel, message: string, step?: string) => void,
): Promise<void> {
  const opts = {
    user: state.user,
    envs: state.envs,
    ...(state.workdir ? { cwd: state.workdir } : {}),
  };
  if (plan.startCmd) {
    logLine("info", `Running start command: ${plan.startCmd}`, BUILD_STEP.finalize);
    // Left running in the background: the agent keeps a process whose client went away.
    await agent.startDetached(plan.startCmd, { ...opts, tag: "start_cmd" });
  }
  if (!plan.readyCmd) return;
  logLine("info", `Waiting for ready command: ${plan.readyCmd}`, BUILD_STEP.finalize);
  const deadline = Date.now() + READY_CMD_TIMEOUT_MS;
  for (;;) {
    const r = await (
      await agent.start(plan.readyCmd, { ...opts, timeoutMs: READY_CMD_TIMEOUT_MS })
    ).wait();
    if (r.exitCode === 0) return;
    if (Date.now() >= deadline) {
      throw new StepFailure(
        `ready command ${JSON.stringify(plan.readyCmd)} did not succeed within ${READY_CMD_TIMEOUT_MS / 1000} s (last exit code ${r.exitCode}): ${tail(r.stderr) || "(no stderr)"}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, READY_CMD_RETRY_MS));
  }
}
