/**
 * Binary `StreamInput` (stdin-stream.ts, outside Connect's pipeline) against
 * JSON `StreamInput` (Connect's own handler) in the same agent: the same
 * calls must get the same answers.
 */
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { endStreamFromJson } from "@connectrpc/connect/protocol-connect";
import { createHash, randomBytes } from "node:crypto";
import { Process, StreamInputRequestSchema } from "../../gen/envd/process/process_pb";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients, rawRequest } from "../../../test/support/agent/clients";
import { collect } from "../../../test/support/agent/collect";
import { stdinFrame } from "../../wire/stdin-frame";
import { RPC_MAX_BODY_BYTES } from "../../wire/envd";

type Request = MessageInitShape<typeof StreamInputRequestSchema>;

let sbx: TestSandbox;
let json: ReturnType<typeof agentClients>["process"];
let binary: Client<typeof Process>;
beforeAll(async () => {
  sbx = await startTestSandbox();
  json = agentClients(sbx.socketPath).process;
  binary = createClient(
    Process,
    createConnectTransport({
      baseUrl: "http://localhost",
      httpVersion: "1.1",
      useBinaryFormat: true,
      nodeOptions: { socketPath: sbx.socketPath },
    }),
  );
});
afterAll(async () => {
  await sbx?.stop();
});

const start = (pid: number): Request => ({
  event: { case: "start", value: { process: { selector: { case: "pid", value: pid } } } },
});
const stdin = (bytes: Uint8Array): Request => ({
  event: { case: "data", value: { input: { input: { case: "stdin", value: bytes } } } },
});

/** Starts `cmd` under bash with a stdin pipe (or a PTY); returns its pid and the stream of its events. */
async function started(cmd: string, pty = false) {
  const events = json.start({
    process: { cmd: "/bin/bash", args: ["-c", cmd] },
    stdin: true,
    ...(pty ? { pty: { size: { cols: 80, rows: 24 } } } : {}),
  });
  const it = events[Symbol.asyncIterator]();
  const first = await it.next();
  const event = first.value?.event?.event;
  if (event?.case !== "start") throw new Error(`no start event: ${JSON.stringify(first.value)}`);
  return { pid: event.value.pid, rest: collect({ [Symbol.asyncIterator]: () => it }) };
}

/** The code and message a call failed with, or "ok". */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (err) {
    const e = ConnectError.from(err);
    return `${Code[e.code]}: ${e.rawMessage}`;
  }
}

async function* messages(...requests: Request[]): AsyncGenerator<Request> {
  yield* requests;
}

/** The same call's outcome through JSON (Connect's handler) and binary (stdin-stream.ts). */
async function bothWays(requests: () => Request[]): Promise<[string, string]> {
  const viaJson = await outcome(json.streamInput(messages(...requests())));
  const viaBinary = await outcome(binary.streamInput(messages(...requests())));
  return [viaJson, viaBinary];
}

/** The end-of-stream error of a raw StreamInput answer, or "ok". */
async function rawOutcome(contentType: string, body: Uint8Array): Promise<string> {
  const res = await rawRequest(
    sbx.socketPath,
    "POST",
    "/process.Process/StreamInput",
    { "content-type": contentType, "connect-protocol-version": "1" },
    Buffer.from(body),
  );
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toBe(contentType);
  // The last envelope is the end of the stream.
  let at = 0;
  let last: Uint8Array = new Uint8Array(0);
  while (at < res.body.length) {
    const length = res.body.readUInt32BE(at + 1);
    last = res.body.subarray(at + 5, at + 5 + length);
    at += 5 + length;
  }
  const end = endStreamFromJson(Buffer.from(last).toString());
  return end.error ? `${Code[end.error.code]}: ${end.error.rawMessage}` : "ok";
}

describe("binary StreamInput", () => {
  it("writes every message's stdin in order, then answers once the pipe took it", async () => {
    const { pid, rest } = await started("sleep 0.2; sha256sum");
    const hash = createHash("sha256");
    const sizes = [0, 1, 127, 128, 16_384, 300_000, 1 << 20, 3 << 20];
    const chunks = sizes.map((n) => randomBytes(n));
    for (const c of chunks) hash.update(c);
    // The Provisioner's frames and protobuf-es's encoding, mixed.
    await binary.streamInput(messages(start(pid), ...chunks.map(stdin)));
    await json.closeStdin({ process: { selector: { case: "pid", value: pid } } });
    expect((await rest).stdout).toBe(`${hash.digest("hex")}  -\n`);
    const framed = await started("wc -c");
    const body = Buffer.concat([
      encodeEnvelope(
        0,
        toBinary(StreamInputRequestSchema, create(StreamInputRequestSchema, start(framed.pid))),
      ),
      ...chunks.map((c) => stdinFrame(c)),
    ]);
    expect(await rawOutcome("application/connect+proto", body)).toBe("ok");
    await json.closeStdin({ process: { selector: { case: "pid", value: framed.pid } } });
    expect((await framed.rest).stdout.trim()).toBe(String(sizes.reduce((a, b) => a + b, 0)));
  });

  it("answers a process that has exited, stdin before the start event and a PTY as Connect does", async () => {
    const exited = await started("exit 0");
    await exited.rest;
    const [a, b] = await bothWays(() => [start(exited.pid), stdin(new Uint8Array(100_000))]);
    expect(b).toBe(a);
    expect(b).toMatch(/^NotFound: process with pid \d+ not found$/);

    const [c, d] = await bothWays(() => [stdin(Buffer.from("early"))]);
    expect(d).toBe(c);
    expect(d).toBe("FailedPrecondition: stream input must start with a start event");

    const pty = await started("cat", true);
    const [e, f] = await bothWays(() => [start(pty.pid), stdin(Buffer.from("x"))]);
    expect(f).toBe(e);
    expect(f).toBe("Internal: process has a pty: send pty input instead of stdin");
    await json.sendSignal({ process: { selector: { case: "pid", value: pty.pid } }, signal: 9 });
  });

  it("answers deadline_exceeded when the process does not take its stdin in time, as Connect does", async () => {
    const { pid } = await started("sleep 30");
    const big = () => [start(pid), stdin(new Uint8Array(4 << 20))];
    const viaJson = await outcome(json.streamInput(messages(...big()), { timeoutMs: 500 }));
    const viaBinary = await outcome(binary.streamInput(messages(...big()), { timeoutMs: 500 }));
    expect(viaBinary).toBe(viaJson);
    expect(viaBinary).toMatch(/^DeadlineExceeded: /);
    await json.sendSignal({ process: { selector: { case: "pid", value: pid } }, signal: 9 });
  });

  it("answers a body cut inside a message and one over the size limit as Connect does", async () => {
    const { pid } = await started("cat > /dev/null");
    const proto = (r: Request) =>
      encodeEnvelope(0, toBinary(StreamInputRequestSchema, create(StreamInputRequestSchema, r)));
    const asJson = (r: Request) =>
      encodeEnvelope(
        0,
        Buffer.from(
          JSON.stringify({
            start: {
              process: {
                pid: (r.event?.value as { process: { selector: { value: number } } }).process
                  .selector.value,
              },
            },
          }),
        ),
      );
    const cut = (head: Uint8Array) => Buffer.concat([head, Uint8Array.of(0, 0, 0)]);
    const viaJson = await rawOutcome("application/connect+json", cut(asJson(start(pid))));
    const viaBinary = await rawOutcome("application/connect+proto", cut(proto(start(pid))));
    expect(viaBinary).toBe(viaJson);
    expect(viaBinary).toBe("InvalidArgument: protocol error: incomplete envelope");

    const oversized = Buffer.alloc(5);
    oversized.writeUInt32BE(RPC_MAX_BODY_BYTES + 1, 1);
    const tooBigJson = await rawOutcome("application/connect+json", oversized);
    const tooBigBinary = await rawOutcome("application/connect+proto", oversized);
    expect(tooBigBinary).toBe(tooBigJson);
    expect(tooBigBinary).toMatch(
      /^ResourceExhausted: message size \d+ is larger than configured readMaxBytes/,
    );
    await json.sendSignal({ process: { selector: { case: "pid", value: pid } }, signal: 9 });
  });

  it("refuses a compressed envelope and skips a client's end-of-stream one, as Connect does", async () => {
    const outcomes = [];
    for (const flags of [1, 2]) {
      const flagged = encodeEnvelope(flags, Buffer.from("{}"));
      const viaJson = await rawOutcome("application/connect+json", flagged);
      const viaBinary = await rawOutcome("application/connect+proto", flagged);
      expect(viaBinary).toBe(viaJson);
      outcomes.push(viaBinary);
    }
    expect(outcomes[0]).toMatch(
      /^InvalidArgument: the request could not be decoded: received compressed envelope/,
    );
    expect(outcomes[1]).toBe("ok");
  });
});
