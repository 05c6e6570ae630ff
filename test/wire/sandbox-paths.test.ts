/**
 * The paths inside a sandbox that the runtime, the agent and the service
 * share are written once, in src/wire/sandbox-paths.ts.
 */
import * as path from "node:path";
import { sourcesHolding } from "./support";
import { SUDO_SOCKET_IN_SANDBOX } from "../../src/agent/sudo/protocol";
import * as paths from "../../src/wire/sandbox-paths";

describe("in-sandbox paths", () => {
  it("keeps every agent path under the agent's mount or run directory", () => {
    expect(paths.AGENT_NODE_IN_SANDBOX.startsWith(`${paths.AGENT_MOUNT_DIR}/`)).toBe(true);
    expect(paths.AGENT_BUNDLE_IN_SANDBOX.startsWith(`${paths.AGENT_MOUNT_DIR}/`)).toBe(true);
    expect(paths.AGENT_SOCKET_IN_SANDBOX.startsWith(`${paths.AGENT_RUN_DIR_IN_SANDBOX}/`)).toBe(
      true,
    );
    expect(SUDO_SOCKET_IN_SANDBOX).toBe(paths.SUDO_SOCKET_IN_SANDBOX);
  });

  it("writes them only in src/wire/sandbox-paths.ts", () => {
    const literals = ['"/.sandbox-iac', "/sudo.sock", "/agent.sock", 'sandbox-iac/sudo"'];
    const holders = sourcesHolding(literals);
    expect(holders).toEqual([path.join("wire", "sandbox-paths.ts")]);
  });
});
