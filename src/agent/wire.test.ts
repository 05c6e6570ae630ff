import { type TestSandbox } from "../../test/support/agent/bwrap-sandbox";
import { startRuntimeSandbox as startTestSandbox } from "../../test/support/agent/runtime-sandbox";
import { rawRequest } from "../../test/support/agent/clients";

// Exact bytes on the wire (docs/envd.md#connect-protocol-on-the-wire), read without a Connect client.
let sbx: TestSandbox;
beforeAll(async () => {
  sbx = await startTestSandbox();
});
afterAll(async () => {
  await sbx?.stop();
});

function envelope(json: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(json));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

function parseEnvelopes(buf: Buffer): { flag: number; json: unknown }[] {
  const out: { flag: number; json: unknown }[] = [];
  for (let off = 0; off < buf.length;) {
    const len = buf.readUInt32BE(off + 1);
    out.push({ flag: buf[off], json: JSON.parse(buf.subarray(off + 5, off + 5 + len).toString()) });
    off += 5 + len;
  }
  return out;
}

const stream = { "content-type": "application/connect+json", "connect-protocol-version": "1" };

describe("Connect JSON on the wire", () => {
  it("emits protojson stream messages: exitCode 0 omitted, oneof members by name", async () => {
    const res = await rawRequest(
      sbx.socketPath,
      "POST",
      "/process.Process/Start",
      stream,
      envelope({ process: { cmd: "printf", args: ["hi"] }, stdin: false }),
    );
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/connect+json");
    const msgs = parseEnvelopes(res.body);
    expect(msgs[0].json).toEqual({ event: { start: { pid: expect.any(Number) } } });
    expect(msgs[1].json).toEqual({
      event: { data: { stdout: Buffer.from("hi").toString("base64") } },
    });
    expect(msgs[2].json).toEqual({ event: { end: { exited: true, status: "exit status 0" } } });
    expect(msgs[3]).toEqual({ flag: 2, json: {} });
  });

  it("fails a stream inside the end-of-stream envelope with HTTP 200", async () => {
    const res = await rawRequest(
      sbx.socketPath,
      "POST",
      "/process.Process/Connect",
      stream,
      envelope({ process: { pid: 424242 } }),
    );
    expect(res.status).toBe(200);
    expect(parseEnvelopes(res.body)).toEqual([
      {
        flag: 2,
        json: { error: { code: "not_found", message: "process with pid 424242 not found" } },
      },
    ]);
  });

  it("fails a unary call with the mapped HTTP status and a JSON error, accepting snake_case input", async () => {
    const res = await rawRequest(
      sbx.socketPath,
      "POST",
      "/filesystem.Filesystem/Stat",
      { "content-type": "application/json" },
      JSON.stringify({ path: "/missing", unknown_field: 1 }),
    );
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({
      code: "not_found",
      message: "file not found: /missing",
    });
    const ok = await rawRequest(
      sbx.socketPath,
      "POST",
      "/filesystem.Filesystem/ListDir",
      { "content-type": "application/json" },
      JSON.stringify({ path: "/etc", depth: 1 }),
    );
    const entry = JSON.parse(ok.body.toString()).entries.find(
      (e: { name: string }) => e.name === "passwd",
    );
    expect(entry).toMatchObject({
      type: "FILE_TYPE_FILE",
      size: expect.any(String),
      mode: 0o644,
      permissions: "-rw-r--r--",
    });
    expect(entry.modifiedTime).toMatch(/Z$/);
  });
});
