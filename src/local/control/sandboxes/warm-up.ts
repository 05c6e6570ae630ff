/**
 * How the manager uses the warm pool: what a pool member runs before it is
 * ready, which template is kept warm from the start, and the pool key of a
 * template.
 *
 * @module
 */
import { SandboxIacError } from "../../../errors";
import type { RuntimeSandbox } from "../../runtime/types";
import { agentClient } from "../agent-client";
import type { WarmSpec } from "./warm-pool";

/**
 * How long a pool member's warm-up command may take. Generous: a member is
 * claimed only once warmed up, so a slow warm-up on a busy host (tens of
 * seconds at load 30 on 2 cores) costs nothing, while giving up empties the pool.
 */
const WARM_UP_TIMEOUT_MS = 60_000;
/** The template kept warm from the start. */
export const PRIMED_TEMPLATE = "base";

/** Runs what a create's first command runs (`bash -l -c true`), so that its code paths are compiled and cached. */
export async function warmUpAgent(processes: RuntimeSandbox): Promise<void> {
  const agent = agentClient(processes);
  const res = await (await agent.start("true", { timeoutMs: WARM_UP_TIMEOUT_MS })).wait();
  if (res.exitCode !== 0) {
    throw new SandboxIacError(
      "command_failed",
      `warming up pool sandbox ${processes.sandboxID}: \`bash -l -c true\` exited with ${res.exitCode} (stderr: ${res.stderr.slice(-200) || "none"}); check the template's /etc/profile`,
      {
        operation: "sandboxes.warmPool",
        resourceId: processes.sandboxID,
      },
    );
  }
}

/** The warm-pool key fields of a template and a network choice. */
export function warmSpec(
  template: { layers: string[]; cpuCount: number; memoryMB: number },
  allowInternetAccess: boolean,
): WarmSpec {
  return {
    layers: template.layers,
    cpuCount: template.cpuCount,
    memoryMB: template.memoryMB,
    allowInternetAccess,
  };
}
