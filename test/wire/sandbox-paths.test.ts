/**
 * The paths inside a sandbox that the runtime, the agent and the service
 * share are written once, in src/wire/sandbox-paths.ts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { SUDO_SOCKET_IN_SANDBOX } from "../../src/agent/sudo/protocol";
import * as paths from "../../src/wire/sandbox-paths";

const SRC = path.resolve(__dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "gen" ? [] : sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [p] : [];
  });
}

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
    const holders = sources(SRC)
      .filter((file) => literals.some((l) => fs.readFileSync(file, "utf8").includes(l)))
      .map((file) => path.relative(SRC, file));
    expect(holders).toEqual([path.join("wire", "sandbox-paths.ts")]);
  });
});
