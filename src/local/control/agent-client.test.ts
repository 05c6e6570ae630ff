import * as fs from "node:fs/promises";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { Readable } from "node:stream";
import * as tar from "tar";
import { SandboxIacError } from "../../errors";
import type { RuntimeSandbox } from "../runtime/types";
import { createTestRuntime, sandboxSpec, type TestRuntime } from "../../../test/support/runtime";
import { DRAIN_MAX_BYTES } from "../../wire/early-answer";
import { agentClient } from "./agent-client";

jest.setTimeout(120_000);

/** The code a rejected call failed with. */
async function codeOf(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!SandboxIacError.is(err)) throw new Error(`expected a SandboxIacError, got ${String(err)}`);
  return err.code;
}

describe("agentClient()", () => {
  it("fails with unavailable on /init, commands and extraction alike when nothing listens on the socket", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "agent-client-"));
    try {
      const agent = agentClient({ sandboxID: "igone", agentSocket: path.join(dir, "agent.sock") });
      expect(await codeOf(agent.init({ envVars: {} }))).toBe("unavailable");
      expect(await codeOf(agent.start("true"))).toBe("unavailable");
      expect(await codeOf(agent.extract("/tmp", Readable.from([Buffer.alloc(512)])))).toBe(
        "unavailable",
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  describe("with a running sandbox", () => {
    const TOKEN = "agent-client-test-token-0123456789";
    let t: TestRuntime;
    let rt: RuntimeSandbox;

    beforeAll(async () => {
      t = await createTestRuntime();
      rt = await t.runtime.start(sandboxSpec(t, "iagentclient"));
      await agentClient(rt, { accessToken: TOKEN }).init({
        envVars: { FROM_INIT: "yes" },
        defaultUser: "root",
      });
    });
    afterAll(async () => {
      await rt?.stop();
      await t?.dispose();
    });

    it("runs a command with /init's environment and default user, streaming its output as it comes", async () => {
      const agent = agentClient(rt, { accessToken: TOKEN });
      const seen = { stdout: [] as string[], stderr: [] as string[] };
      let released: Promise<unknown> | undefined;
      // The command ends only once the test has seen its first piece of output,
      // which ends inside an 'é': the pieces must still decode whole.
      const handle = await agent.start(
        "printf '%s \\303' \"$FROM_INIT\"; until [ -e /tmp/go ]; do sleep 0.05; done; printf '\\251 %s\\n' \"$(id -un)\"; echo oops >&2; exit 3",
      );
      const result = await handle.wait({
        onStdout: (text) => {
          seen.stdout.push(text);
          released ??= agent.start("touch /tmp/go").then((h) => h.wait());
        },
        onStderr: (text) => seen.stderr.push(text),
      });
      await released;
      expect(result).toMatchObject({ exitCode: 3, stdout: "yes é root\n", stderr: "oops\n" });
      expect(seen.stdout.length).toBeGreaterThan(1);
      expect(seen.stdout.join("")).toBe(result.stdout);
      expect(seen.stderr.join("")).toBe(result.stderr);
    });

    it("refuses a client without the sandbox's token with unauthenticated, on /init and on commands alike", async () => {
      const stranger = agentClient(rt, { accessToken: "not-the-token-0123456789" });
      expect(await codeOf(stranger.init({ envVars: {} }))).toBe("unauthenticated");
      expect(await codeOf(stranger.start("true"))).toBe("unauthenticated");
      // The refused /init changed nothing: the right token still works.
      const again = await (await agentClient(rt, { accessToken: TOKEN }).start("true")).wait();
      expect(again.exitCode).toBe(0);
    });

    it("extracts an archive into the sandbox, and refuses a stranger's upload before its end without upsetting the next one", async () => {
      const src = await fs.mkdtemp(path.join(os.tmpdir(), "agent-client-tar-"));
      try {
        await fs.writeFile(path.join(src, "hello.txt"), "from the archive\n");
        const archive = () =>
          tar.c({ cwd: src, portable: true }, ["hello.txt"]) as unknown as Readable;
        // Zeros the agent refuses at their first bytes, as much as it still drains after its answer.
        const big = Readable.from(
          (function* () {
            for (let i = 0; i < DRAIN_MAX_BYTES / (64 * 1024); i++) yield Buffer.alloc(64 * 1024);
          })(),
        );
        const stranger = agentClient(rt, { accessToken: "not-the-token-0123456789" });
        expect(await codeOf(stranger.extract("/tmp/unpacked", big))).toBe("unauthenticated");
        // Refused: the rest of the body is read no further.
        expect(big.destroyed).toBe(true);
        const agent = agentClient(rt, { accessToken: TOKEN });
        await agent.extract("/tmp/unpacked", archive());
        const res = await (await agent.start("cat /tmp/unpacked/hello.txt")).wait();
        expect(res).toMatchObject({ exitCode: 0, stdout: "from the archive\n" });
      } finally {
        await fs.rm(src, { recursive: true, force: true });
      }
    });

    it("answers each of many uploads far past what the agent drains with the agent's own refusal, and stops sending once answered", async () => {
      // GIVEN uploads 4 times what the agent reads after its answer before it closes the
      // connection: a client that read the answer only once a write had to wait saw the reset
      // instead, 'unavailable' (0-26 of 100 per run, 7 of 8 runs with at least one)
      const stranger = agentClient(rt, { accessToken: "not-the-token-0123456789" });
      const size = 4 * DRAIN_MAX_BYTES;
      const codes: string[] = [];
      const taken: number[] = [];
      for (let n = 0; n < 200; n++) {
        let made = 0;
        // In pieces as small as an archive's: the client spends longer on each than the agent
        // does, so the agent keeps up and no write ever waits (the case that failed most).
        const big = Readable.from(
          (function* () {
            for (; made < size; made += 4096) yield Buffer.alloc(4096);
          })(),
        );
        // WHEN a stranger sends them
        codes.push(await codeOf(stranger.extract("/tmp/unpacked", big)));
        taken.push(made);
        expect(big.destroyed).toBe(true);
      }
      // THEN every one gets the agent's answer, read before the agent stopped draining
      expect(codes.filter((c) => c !== "unauthenticated")).toEqual([]);
      expect(taken.filter((bytes) => bytes >= DRAIN_MAX_BYTES)).toEqual([]);
    });

    it("answers every upload to a full disk with 507 and keeps the connection for the next requests", async () => {
      // GIVEN the sandbox's disk full (fallocate takes the space without writing it)
      const agent = agentClient(rt, { accessToken: TOKEN });
      const fill = await (
        await agent.start(
          "fallocate -l $(( $(df -B1 --output=avail / | tail -1) - 1048576 )) /fill && (dd if=/dev/zero of=/fill2 bs=64k 2>/dev/null; true)",
        )
      ).wait();
      expect(fill.exitCode).toBe(0);
      try {
        // WHEN uploads answered before their body's end and other requests share one keep-alive connection
        const pool = new http.Agent({ keepAlive: true, maxSockets: 1 });
        const sockets = new Set<unknown>();
        const send = (method: string, route: string, body?: Buffer) =>
          new Promise<{ status: number; text: string }>((resolve, reject) => {
            const req = http.request(
              {
                socketPath: rt.agentSocket,
                agent: pool,
                method,
                path: route,
                headers: {
                  "X-Access-Token": TOKEN,
                  ...(body ? { "Content-Type": "application/octet-stream" } : {}),
                },
              },
              (res) => {
                let text = "";
                res.setEncoding("utf8");
                res.on("data", (d: string) => (text += d));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
                res.on("error", reject);
              },
            );
            req.on("socket", (socket) => sockets.add(socket));
            req.on("error", reject);
            req.end(body);
          });
        try {
          const answers: number[] = [];
          for (let i = 0; i < 4; i++) {
            const up = await send("POST", `/files?path=/up-${i}.bin`, Buffer.alloc(2 << 20, i));
            expect(up.text).toMatch(/space/i);
            answers.push(up.status);
            answers.push((await send("GET", "/health")).status);
          }
          // THEN each got its own answer, all on the one connection
          expect(answers).toEqual([507, 204, 507, 204, 507, 204, 507, 204]);
          expect(sockets.size).toBe(1);
        } finally {
          pool.destroy();
        }
      } finally {
        await (await agent.start("rm -f /fill /fill2", { user: "root" })).wait();
      }
    });

    it("fails with timeout, naming the call, when the agent stops answering", async () => {
      // GIVEN an agent that answers nothing: every process of its sandbox stopped
      const agent = agentClient(rt, { accessToken: TOKEN, callTimeoutMs: 1_000 });
      await rt.freeze();
      try {
        // THEN each of the service's own calls fails with its deadline instead of hanging
        const init = await agent.init({ envVars: { FROM_INIT: "yes" }, defaultUser: "root" }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(init).toMatchObject({
          code: "timeout",
          message: expect.stringMatching(
            /the agent of sandbox iagentclient did not answer POST \/init within 1 s: .*kill the sandbox/,
          ),
        });
        expect(await codeOf(agent.startDetached("true"))).toBe("timeout");
        expect(
          await codeOf(agent.extract("/tmp", Readable.from([Buffer.alloc(4 << 20)]), "root")),
        ).toBe("timeout");
      } finally {
        await rt.thaw();
      }
    });
  });
});
