/**
 * Binary `StreamInput` through the service (src/local/proxy/direct-stdin.ts):
 * written by the service into the process's stdin pipe itself, the agent
 * only naming the pipe; left to the agent, with the bytes read so far, when
 * the pipe cannot be had; answered as the agent answers either way.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { endStreamFromJson } from "@connectrpc/connect/protocol-connect";
import { createHash, randomBytes } from "node:crypto";
import * as diagnostics from "node:diagnostics_channel";
import type * as http from "node:http";
import { StreamInputRequestSchema } from "../../src/gen/envd/process/process_pb";
import type { SandboxClient } from "../../src/client/sandbox";
import { SandboxIacError } from "../../src/errors";
import { sandboxPaths } from "../../src/local/runtime/paths";
import { ENVD_HEADERS } from "../../src/wire/envd";
import { stdinFrame } from "../../src/wire/stdin-frame";
import { resolveConfig } from "../../src/config";
import { createSandboxClient } from "../../src/client/sandbox";
import { useSandboxClientFixture, type SandboxClientFixture } from "../e2e/sandbox-client.support";
import { eventually } from "../support/eventually";
import { call, createSandbox } from "./support";

let fixture: SandboxClientFixture;
let client: SandboxClient;
let sandboxID: string;
let token: string;
let sandboxUrl: string;
let agentSocket: string;
useSandboxClientFixture((fx) => {
  fixture = fx;
  ({ client, sandboxID, token } = fx);
  sandboxUrl = fx.svc.sandboxUrl;
  agentSocket = sandboxPaths(fx.svc.dataDir, sandboxID).socket;
});

/**
 * Every request the service sent the fixture sandbox's agent ({@link toAgent}),
 * and any agent ({@link toAgents}, with its socket), as `METHOD path`. The
 * service runs in this process, so node:http tells the test about each.
 */
const toAgent: string[] = [];
const toAgents: string[] = [];
diagnostics.subscribe("http.client.request.start", (message) => {
  const { request } = message as { request: http.ClientRequest & { socketPath?: string } };
  if (request.socketPath === undefined) return;
  toAgents.push(`${request.socketPath} ${request.method} ${request.path}`);
  if (request.socketPath === agentSocket) toAgent.push(`${request.method} ${request.path}`);
});
const STREAM_INPUT = "POST /process.Process/StreamInput";

async function* bytes(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

/** The code and message a client call failed with, or "ok". */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (err) {
    const e = SandboxIacError.from(err, { operation: "test" });
    return `${e.code}: ${e.reason}`;
  }
}

/** A raw binary StreamInput `body` sent through the service: the end-of-stream error, or "ok". */
async function rawOutcome(body: Uint8Array, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${sandboxUrl}/process.Process/StreamInput`, {
    method: "POST",
    headers: {
      "content-type": "application/connect+proto",
      "connect-protocol-version": "1",
      [ENVD_HEADERS.sandboxID]: sandboxID,
      [ENVD_HEADERS.accessToken]: token,
      ...headers,
    },
    body,
  });
  expect(res.status).toBe(200);
  const answer = Buffer.from(await res.arrayBuffer());
  let at = 0;
  let last = Buffer.alloc(0);
  while (at < answer.length) {
    const length = answer.readUInt32BE(at + 1);
    last = answer.subarray(at + 5, at + 5 + length);
    at += 5 + length;
  }
  const end = endStreamFromJson(last.toString());
  return end.error ? `${Code[end.error.code]}: ${end.error.rawMessage}` : "ok";
}

const startEnvelope = (pid: number) =>
  encodeEnvelope(
    0,
    toBinary(
      StreamInputRequestSchema,
      create(StreamInputRequestSchema, {
        event: { case: "start", value: { process: { selector: { case: "pid", value: pid } } } },
      }),
    ),
  );

describe("direct stdin", () => {
  it("writes a binary StreamInput into the process's stdin pipe itself, the agent only naming the pipe", async () => {
    const handle = await client.start("sha256sum", { stdin: true });
    const chunks = [1 << 20, 0, 127, 300_000, (2 << 20) + 3].map((n) => randomBytes(n));
    const hash = createHash("sha256");
    for (const c of chunks) hash.update(c);
    toAgent.length = 0;
    await client.streamInput(handle.pid, bytes(...chunks));
    expect(toAgent).toEqual([`GET /_sandbox-iac/stdin-pipe?pid=${handle.pid}`]);
    // The service's end is closed once written: the process sees the end once the agent's closes.
    await client.closeStdin(handle.pid);
    expect((await handle.wait()).stdout).toBe(`${hash.digest("hex")}  -\n`);
  });

  it("leaves a process without a stdin pipe, or an unknown one, to the agent, which answers as it does", async () => {
    const noStdin = await client.start("sleep 30", { stdin: false });
    toAgent.length = 0;
    expect(await outcome(client.streamInput(noStdin.pid, bytes(Buffer.from("x"))))).toMatch(
      /^internal: .*stdin not enabled or closed/,
    );
    expect(toAgent).toEqual([`GET /_sandbox-iac/stdin-pipe?pid=${noStdin.pid}`, STREAM_INPUT]);
    await client.sendSignal(noStdin.pid, "SIGKILL");
    toAgent.length = 0;
    expect(await outcome(client.streamInput(999_999, bytes(Buffer.from("x"))))).toMatch(
      /^not_found: .*999999/,
    );
    expect(toAgent).toEqual(["GET /_sandbox-iac/stdin-pipe?pid=999999", STREAM_INPUT]);
  });

  it("relays the call with its access token checked by the agent", async () => {
    const handle = await client.start("cat > /dev/null", { stdin: true });
    const res = await fetch(`${sandboxUrl}/process.Process/StreamInput`, {
      method: "POST",
      headers: {
        "content-type": "application/connect+proto",
        [ENVD_HEADERS.sandboxID]: sandboxID,
        [ENVD_HEADERS.accessToken]: "not-the-token",
      },
      body: Buffer.concat([startEnvelope(handle.pid), stdinFrame(Buffer.from("x"))]),
    });
    expect(res.status).toBe(401);
    await client.sendSignal(handle.pid, "SIGKILL");
  });

  it("answers a deadline, a body cut inside a message and a message over the limit as the agent does", async () => {
    const slow = await client.start("sleep 30", { stdin: true });
    const big = Buffer.concat([startEnvelope(slow.pid), stdinFrame(new Uint8Array(4 << 20))]);
    toAgent.length = 0;
    expect(await rawOutcome(big, { "connect-timeout-ms": "500" })).toMatch(/^DeadlineExceeded: /);
    expect(toAgent).not.toContain(STREAM_INPUT);
    await client.sendSignal(slow.pid, "SIGKILL");

    const cat = await client.start("cat > /dev/null", { stdin: true });
    const cut = Buffer.concat([startEnvelope(cat.pid), Uint8Array.of(0, 0, 0)]);
    expect(await rawOutcome(cut)).toBe("InvalidArgument: protocol error: incomplete envelope");
    const oversized = Buffer.alloc(5);
    oversized.writeUInt32BE(64 << 20, 1);
    expect(await rawOutcome(Buffer.concat([startEnvelope(cat.pid), oversized]))).toMatch(
      /^ResourceExhausted: message size \d+ is larger than configured readMaxBytes/,
    );
    expect(toAgent).not.toContain(STREAM_INPUT);
    await client.sendSignal(cat.pid, "SIGKILL");
  });

  it("answers that stdin is closed once the process stops reading, as the agent does", async () => {
    const reader = await client.start("head -c 10 > /dev/null", { stdin: true });
    expect(
      await outcome(
        client.streamInput(
          reader.pid,
          bytes(...Array.from({ length: 8 }, () => randomBytes(1 << 20))),
        ),
      ),
    ).toMatch(/^internal: .*stdin not enabled or closed/);
    expect((await reader.wait()).exitCode).toBe(0);
  });

  it("cuts the call when its sandbox is killed while the process holds its input back", async () => {
    const { svc } = fixture;
    const other = await createSandbox(svc, { secure: true });
    const otherClient = createSandboxClient({
      sandboxID: other.sandboxID,
      accessToken: other.envdAccessToken,
      config: resolveConfig({
        apiUrl: svc.apiUrl,
        sandboxUrl: svc.sandboxUrl,
        apiKey: svc.apiKey,
        env: {},
      }),
    });
    const stalled = await otherClient.start("sleep 60", { stdin: true });
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (;;) yield new Uint8Array(1 << 20);
    }
    const sending = outcome(otherClient.streamInput(stalled.pid, endless()));
    // Under way once the service asked the agent for the pipe; the pipe then fills and holds.
    const asked = `${sandboxPaths(svc.dataDir, other.sandboxID).socket} GET /_sandbox-iac/stdin-pipe?pid=${stalled.pid}`;
    await eventually(() => toAgents.includes(asked));
    expect((await call(svc, "DELETE", `/sandboxes/${other.sandboxID}`)).status).toBe(204);
    expect(await sending).toMatch(/^(unavailable|not_found|internal|canceled): /);
    // The service goes on serving.
    expect((await client.run("echo still here")).stdout).toBe("still here\n");
  });
});
