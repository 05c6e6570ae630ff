import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients } from "../../../test/support/agent/clients";
import { collect } from "../../../test/support/agent/collect";

let sbx: TestSandbox;
beforeAll(async () => {
  sbx = await startTestSandbox();
});
afterAll(() => sbx?.stop());

describe("PTY output at exit", () => {
  it("delivers what a PTY process wrote right before it exited, even with the agent busy", async () => {
    const clients = agentClients(sbx.socketPath);
    // Several terminals at once flood the agent's event loop; each ends with
    // a marker written just before exit, while a background child keeps the
    // terminal open (so no EIO tells node-pty the output is complete).
    const runs = Array.from({ length: 8 }, (_, i) =>
      collect(
        clients.process.start({
          process: {
            cmd: "/bin/bash",
            args: [
              "-c",
              `(sleep 2 &) ; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo MARKER-${i}-END`,
            ],
            envs: { TERM: "xterm-256color" },
          },
          pty: { size: { cols: 200, rows: 50 } },
        }),
      ),
    );
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      expect(r.end?.exitCode ?? 0).toBe(0);
      // Only the tail is compared, so a failure does not print megabytes.
      expect(r.pty.slice(-64)).toContain(`MARKER-${i}-END`);
    });
  });
});
