import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { startTestSandbox } from "../../test/support/agent/bwrap-sandbox";
import { rawRequest } from "../../test/support/agent/clients";
import { bridgeToSocket } from "../../test/support/agent/tcp-bridge";

// The official SDK is the judge. It is ESM-only, so the scenario runs in its own
// Node process; debug mode skips the control API and talks to envd at the bridge.
describe("the e2b SDK against the agent", () => {
  it("runs commands, moves files, watches and drives a PTY", async () => {
    const sbx = await startTestSandbox();
    const bridge = await bridgeToSocket(sbx.socketPath);
    try {
      await rawRequest(
        sbx.socketPath,
        "POST",
        "/init",
        {},
        JSON.stringify({ defaultUser: "user" }),
      );
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [path.join(__dirname, "..", "..", "test", "support", "agent", "sdk-scenario.mjs")],
        {
          env: { ...process.env, SANDBOX_URL: bridge.url },
          timeout: 60_000,
        },
      );
      const out = JSON.parse(stdout);
      expect(out).toEqual({
        run: { exitCode: 0, stdout: "hi\nuser\n/home/user\n" },
        runFail: { isExitError: true, exitCode: 4, stderr: "bad\n" },
        listed: true,
        stdinResult: "piped\n",
        killed: true,
        killUnknown: false,
        read: "content",
        readBytes: "bee",
        readGzip: "gz",
        list: [
          ["a.txt", "file"],
          ["b.txt", "file"],
          ["c.txt", "file"],
        ],
        metadata: { k: "v" },
        makeDir: [true, false],
        existsAfterRename: false,
        sizeAfterRename: 7,
        existsAfterRemove: false,
        watchEvents: expect.arrayContaining(["write:f.txt"]),
        ptyHasOutput: true,
      });
    } finally {
      await bridge.close();
      await sbx.stop();
    }
  });
});
