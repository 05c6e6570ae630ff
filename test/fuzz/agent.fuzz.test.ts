/**
 * Fuzz test of the in-sandbox agent: every envd HTTP route and Connect RPC
 * gets malformed paths, bodies, headers and content types. A bounded,
 * seeded run (the seed is printed; set FUZZ_SEED to replay one) asserts that
 * no answer is a 5xx (or, on a stream, an internal end-of-stream error), that
 * every request is answered within a few seconds, and that the agent still
 * serves afterwards.
 */
import * as http from "node:http";
import { startTestSandbox, type TestSandbox } from "../../src/agent/testing/bwrap-sandbox";
import { agentClients, rawRequest } from "../../src/agent/testing/clients";
import {
  BAD_BODIES,
  BAD_PATHS,
  BAD_VALUES,
  CONTENT_TYPES,
  envelope,
  pick,
  prng,
} from "./fuzz-inputs";

/** Cases per run: enough to hit every route many times, bounded in time. */
const CASES = 400;
/** No answer (status line) within this long is a hang. */
const ANSWER_WITHIN_MS = 5_000;
/** How long an open stream is read before the client lets it go. */
const STREAM_READ_MS = 1_500;

/**
 * Answers envd itself gives with `internal`/`unknown` for these client
 * mistakes (wire-protocol.md 6.2); kept for parity, so allowed by message.
 */
const ENVD_PARITY_5XX = [
  /^process has (a|no) pty/,
  /^stdin not enabled or closed$/,
  /^tty not assigned$/,
  /^cannot close stdin for PTY process/,
];

const SERVER_ERROR_CODES = new Set(["internal", "unknown", "data_loss", "unavailable"]);

interface Case {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

interface Outcome {
  status: number;
  contentType: string;
  body: Buffer;
  /** Whether the response ended while it was read. */
  ended: boolean;
}

/** Sends one request; rejects when no status line arrives within {@link ANSWER_WITHIN_MS}. */
function send(socketPath: string, c: Case): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: c.method, path: c.path, headers: c.headers });
    const hang = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`));
    }, ANSWER_WITHIN_MS);
    req.on("response", (res) => {
      clearTimeout(hang);
      const chunks: Buffer[] = [];
      const done = (ended: boolean) => {
        clearTimeout(stop);
        res.destroy();
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          body: Buffer.concat(chunks),
          ended,
        });
      };
      const stop = setTimeout(() => done(false), STREAM_READ_MS);
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => done(true));
      res.on("error", () => done(false));
    });
    // A refusal may close the connection while the body is still being sent.
    req.on("error", (err) => {
      clearTimeout(hang);
      reject(err);
    });
    req.end(c.body);
  });
}

/** The end-of-stream error code of a Connect streaming response, if it has ended with one. */
function endStreamError(body: Buffer): { code: string; message: string } | undefined {
  let at = 0;
  while (at + 5 <= body.length) {
    const flags = body.readUInt8(at);
    const len = body.readUInt32BE(at + 1);
    const payload = body.subarray(at + 5, at + 5 + len);
    at += 5 + len;
    if (flags & 0x02) {
      const parsed = JSON.parse(payload.toString() || "{}") as {
        error?: { code: string; message: string };
      };
      return parsed.error;
    }
  }
  return undefined;
}

const UNARY_RPCS = [
  "/process.Process/List",
  "/process.Process/Update",
  "/process.Process/SendInput",
  "/process.Process/SendSignal",
  "/process.Process/CloseStdin",
  "/filesystem.Filesystem/Stat",
  "/filesystem.Filesystem/MakeDir",
  "/filesystem.Filesystem/Move",
  "/filesystem.Filesystem/ListDir",
  "/filesystem.Filesystem/Remove",
  "/filesystem.Filesystem/CreateWatcher",
  "/filesystem.Filesystem/GetWatcherEvents",
  "/filesystem.Filesystem/RemoveWatcher",
] as const;
const STREAM_RPCS = [
  "/process.Process/Start",
  "/process.Process/Connect",
  "/process.Process/StreamInput",
  "/filesystem.Filesystem/WatchDir",
] as const;
const HTTP_ROUTES = [
  "GET /health",
  "GET /metrics",
  "GET /envs",
  "GET /files",
  "POST /files",
  "POST /files/compose",
] as const;

/** A plausible-but-wrong message for `rpc`, built from the bad inputs. */
function message(rand: () => number, rpc: string): unknown {
  const p = () => (rand() < 0.8 ? pick(rand, BAD_PATHS) : pick(rand, BAD_VALUES));
  const v = () => (rand() < 0.5 ? pick(rand, BAD_VALUES) : pick(rand, BAD_PATHS));
  const selector = () =>
    rand() < 0.5 ? { selector: { pid: v() } } : rand() < 0.5 ? { pid: v() } : { tag: v() };
  switch (rpc.split("/")[2]) {
    case "Move":
      return { source: p(), destination: p() };
    case "ListDir":
      return { path: p(), depth: v() };
    case "WatchDir":
    case "CreateWatcher":
      return { path: p(), recursive: v(), includeEntry: v(), allowNetworkMounts: v() };
    case "GetWatcherEvents":
    case "RemoveWatcher":
      return { watcherId: v() };
    case "Start":
      return {
        process: {
          cmd: pick(rand, ["/bin/true", "", "a\0b", "/nonexistent", "/bin/echo", v()]),
          args: rand() < 0.5 ? [String(v()), "x\0y"] : v(),
          envs: rand() < 0.5 ? { "A\0": "1", "=": "b", B: "c\0" } : v(),
          cwd: p(),
        },
        pty: rand() < 0.3 ? { size: { cols: v(), rows: v() } } : undefined,
        stdin: v(),
        tag: v(),
      };
    case "SendInput":
      return { process: selector(), input: { stdin: v(), pty: v() } };
    case "SendSignal":
      return { process: selector(), signal: v() };
    case "Update":
      return { process: selector(), pty: { size: { cols: v(), rows: v() } } };
    default:
      return rand() < 0.5 ? { path: p() } : { process: selector() };
  }
}

function headerNoise(rand: () => number): Record<string, string> {
  const h: Record<string, string> = {};
  if (rand() < 0.3) {
    h.authorization = pick(rand, [
      "Basic " + Buffer.from("nobody:").toString("base64"),
      "Basic !!!",
      "Bearer x",
      "Basic " + Buffer.from("root:").toString("base64"),
      "Basic",
    ]);
  }
  if (rand() < 0.3) h["keepalive-ping-interval"] = pick(rand, ["-1", "abc", "0", "1e9"]);
  if (rand() < 0.2) h["x-metadata-" + pick(rand, ["k", "ok"])] = pick(rand, ["v", ""]);
  if (rand() < 0.1) h["content-encoding"] = pick(rand, ["gzip", "br", "identity"]);
  return h;
}

function buildCase(rand: () => number, i: number): Case {
  const kind = rand();
  const headers = headerNoise(rand);
  if (kind < 0.35) {
    const rpc = pick(rand, UNARY_RPCS);
    const body = rand() < 0.7 ? JSON.stringify(message(rand, rpc)) : pick(rand, BAD_BODIES);
    headers["content-type"] = rand() < 0.85 ? "application/json" : pick(rand, CONTENT_TYPES);
    return { method: "POST", path: rpc, headers, body };
  }
  if (kind < 0.6) {
    const rpc = pick(rand, STREAM_RPCS);
    const json = rand() < 0.7 ? JSON.stringify(message(rand, rpc)) : pick(rand, BAD_BODIES);
    const body = rand() < 0.8 ? envelope(json, rand() < 0.1 ? 0x01 : 0) : json;
    headers["content-type"] =
      rand() < 0.85 ? "application/connect+json" : pick(rand, CONTENT_TYPES);
    // Streams that start processes or watches end by themselves.
    headers["connect-timeout-ms"] = rand() < 0.9 ? "2000" : pick(rand, ["-5", "abc", "0"]);
    return { method: "POST", path: rpc, headers, body };
  }
  const [method, route] = pick(rand, HTTP_ROUTES).split(" ") as [string, string];
  const q = new URLSearchParams();
  if (rand() < 0.9) q.set("path", String(pick(rand, BAD_PATHS)));
  if (rand() < 0.3) q.set("username", pick(rand, ["nobody", "", "root", "a\0"]));
  if (rand() < 0.2) q.set("signature", pick(rand, ["v1_x", "", "v2_"]));
  if (rand() < 0.2) q.set("signature_expiration", pick(rand, ["-1", "abc", "1"]));
  let body: string | Buffer = "";
  if (method === "POST" && route === "/files") {
    headers["content-type"] = pick(rand, CONTENT_TYPES);
    body =
      rand() < 0.5
        ? pick(rand, BAD_BODIES)
        : `--zz\r\nContent-Disposition: form-data; name="file"${
            rand() < 0.5 ? `; filename="${String(pick(rand, BAD_PATHS)).replace(/"/g, "")}"` : ""
          }\r\n\r\ncontent ${i}\r\n--zz--\r\n`;
  } else if (method === "POST") {
    headers["content-type"] = rand() < 0.8 ? "application/json" : pick(rand, CONTENT_TYPES);
    body =
      rand() < 0.6
        ? JSON.stringify({
            source_paths:
              rand() < 0.7
                ? [pick(rand, BAD_PATHS), pick(rand, BAD_PATHS)]
                : pick(rand, BAD_VALUES),
            destination: rand() < 0.8 ? pick(rand, BAD_PATHS) : pick(rand, BAD_VALUES),
            username: rand() < 0.2 ? pick(rand, BAD_VALUES) : undefined,
          })
        : pick(rand, BAD_BODIES);
  } else if (rand() < 0.2) {
    headers.range = pick(rand, [
      "bytes=5-1",
      "bytes=-0",
      "bytes=99999999-",
      "bytes=abc",
      "bytes=0-0",
    ]);
  }
  if (rand() < 0.1) headers["accept-encoding"] = "gzip";
  return { method, path: `${route}?${q.toString()}`, headers, body };
}

/** Why `o` is a server failure, or undefined when it is an acceptable answer. */
function serverFailure(o: Outcome): string | undefined {
  const text = o.body.toString("utf8");
  if (o.status >= 500) {
    let msg = "";
    try {
      msg = (JSON.parse(text) as { message?: string }).message ?? "";
    } catch {
      // not JSON: reported below with the raw text
    }
    if (ENVD_PARITY_5XX.some((re) => re.test(msg))) return undefined;
    return `HTTP ${o.status}: ${text.slice(0, 300)}`;
  }
  if (o.status === 200 && o.contentType.startsWith("application/connect+json")) {
    const err = endStreamError(o.body);
    if (
      err &&
      SERVER_ERROR_CODES.has(err.code) &&
      !ENVD_PARITY_5XX.some((re) => re.test(err.message))
    ) {
      return `stream ended with ${err.code}: ${err.message}`;
    }
  }
  return undefined;
}

describe("agent under malformed input", () => {
  let sbx: TestSandbox;
  beforeAll(async () => {
    sbx = await startTestSandbox();
    const { fs: files, process: proc } = agentClients(sbx.socketPath);
    await files.makeDir({ path: "/tmp/fuzz-dir" });
    const up = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/fuzz-file",
      { "content-type": "application/octet-stream" },
      "fuzz",
    );
    expect(up.status).toBe(200);
    // A symbolic-link loop, for ELOOP.
    for await (const _ of proc.start({
      process: {
        cmd: "/bin/sh",
        args: ["-c", "ln -s loop-b /tmp/loop-a; ln -s loop-a /tmp/loop-b"],
      },
      stdin: false,
    })) {
      // drain to the end
    }
  });
  afterAll(() => sbx?.stop());

  it("answers every malformed request with a 4xx (never a 5xx) within seconds, and keeps serving", async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const rand = prng(seed);
    const failures: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const c = buildCase(rand, i);
      const label = `seed ${seed} case ${i}: ${c.method} ${c.path.slice(0, 120)} [${c.headers["content-type"] ?? ""}]`;
      try {
        const why = serverFailure(await send(sbx.socketPath, c));
        if (why) failures.push(`${label}: ${why}`);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        // A refused oversized or undecodable body may reset the connection
        // after the answer was written; a hang or a refused connection may not.
        if (e.code !== "EPIPE" && e.code !== "ECONNRESET") failures.push(`${label}: ${e.message}`);
      }
    }
    expect(failures).toEqual([]);

    // Still serving: health, a Connect call, and a file round trip.
    const health = await rawRequest(sbx.socketPath, "GET", "/health");
    expect(health.status).toBe(204);
    const up = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/after-fuzz.txt",
      { "content-type": "application/octet-stream" },
      "still here",
    );
    expect(up.status).toBe(200);
    const down = await rawRequest(sbx.socketPath, "GET", "/files?path=/tmp/after-fuzz.txt");
    expect(down.body.toString()).toBe("still here");
    const { fs: files } = agentClients(sbx.socketPath);
    const { entry } = await files.stat({ path: "/tmp/after-fuzz.txt" });
    expect(entry).toMatchObject({ name: "after-fuzz.txt", size: 10n });
  }, 300_000);

  it("refuses an oversized Connect body with 413 before reading it", async () => {
    const res = await rawRequest(
      sbx.socketPath,
      "POST",
      "/filesystem.Filesystem/Stat",
      { "content-type": "application/json", "content-length": String(64 * 1024 * 1024) },
      // The declared length is what is checked; the body never needs to arrive.
      undefined,
    ).catch((err: Error) => ({ status: -1, body: Buffer.from(err.message), headers: {} }));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: "resource_exhausted" });
  });
});
