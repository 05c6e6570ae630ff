import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolveConfig } from "../../config";
import { SandboxIacError } from "../../errors";
import { createControlClient, type ControlClientOptions } from "./client";

const KEY = "e2b_00112233445566778899aabbccddeeff";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}
type Reply = (res: ServerResponse, req: Seen) => void;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A real HTTP server answering the n-th request with replies[n] (the last one repeats). */
async function scripted(...replies: Reply[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(entry);
      const reply = replies[Math.min(seen.length, replies.length) - 1];
      reply?.(res, entry);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(body));
  };
const empty =
  (status: number): Reply =>
  (res) => {
    res.writeHead(status);
    res.end();
  };
const reset: Reply = (res) => res.socket?.destroy();

function client(url: string, extra: ControlClientOptions = {}) {
  return createControlClient({
    config: resolveConfig({ apiUrl: url, apiKey: KEY, env: {} }),
    retryPolicy: { baseDelayMs: 1 },
    log: () => undefined,
    ...extra,
  });
}

const detail = {
  templateID: "base",
  sandboxID: "iabc",
  clientID: "6532622b",
  startedAt: "2026-08-21T10:00:00Z",
  endAt: "2026-08-21T10:05:00.123456789Z",
  envdVersion: "0.6.13",
  cpuCount: 2,
  memoryMB: 512,
  diskSizeMB: 0,
  state: "running",
};
const listed = (id: string) => ({ ...detail, sandboxID: id });

async function failure(promise: Promise<unknown>): Promise<SandboxIacError> {
  try {
    await promise;
  } catch (error) {
    if (SandboxIacError.is(error)) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("createControlClient() retries", () => {
  it("retries an idempotent call after 503 and returns the later success", async () => {
    const srv = await scripted(json(503, { code: 503, message: "busy" }), json(200, detail));
    await expect(client(srv.url).getSandbox("iabc")).resolves.toMatchObject({ sandboxID: "iabc" });
    expect(srv.seen).toHaveLength(2);
  });

  it("waits for the Retry-After of a 429 before retrying", async () => {
    const srv = await scripted(
      json(429, { code: 429, message: "slow down" }, { "Retry-After": "1" }),
      json(200, detail),
    );
    const lines: string[] = [];
    await client(srv.url, { log: (l) => lines.push(l) }).getSandbox("iabc");
    expect(srv.seen).toHaveLength(2);
    expect(lines).toEqual([expect.stringContaining("HTTP 429; retry 1/3 in 1000 ms")]);
  });

  it("retries after the connection is reset", async () => {
    const srv = await scripted(reset, json(200, detail));
    await expect(client(srv.url).getSandbox("iabc")).resolves.toMatchObject({ sandboxID: "iabc" });
    expect(srv.seen).toHaveLength(2);
  });

  it("never retries a sandbox create", async () => {
    const srv = await scripted(json(503, { code: 503, message: "busy" }), json(201, detail));
    const err = await failure(client(srv.url).createSandbox({ templateID: "base" }));
    expect(err.code).toBe("unavailable");
    expect(srv.seen).toHaveLength(1);
  });

  it("fails with unavailable after the bounded retries run out", async () => {
    const srv = await scripted(json(502, { code: 502, message: "bad gateway" }));
    const err = await failure(client(srv.url, { retries: 2 }).getSandbox("iabc"));
    expect(err.code).toBe("unavailable");
    expect(err.status).toBe(502);
    expect(srv.seen).toHaveLength(3);
  });

  it("fails with unavailable when nothing listens", async () => {
    const srv = await scripted(empty(204));
    const url = srv.url;
    await new Promise((resolve) => servers.splice(0)[0]?.close(resolve));
    const err = await failure(client(url, { retries: 1 }).getSandbox("iabc"));
    expect(err.code).toBe("unavailable");
  });
});

describe("createControlClient() errors", () => {
  it("maps a 404 Error body to not_found with the operation, the id and the server's message", async () => {
    const srv = await scripted(json(404, { code: 404, message: 'Sandbox "iabc" doesn\'t exist' }));
    const err = await failure(client(srv.url).getSandbox("iabc"));
    expect(err).toMatchObject({
      code: "not_found",
      status: 404,
      operation: "sandboxes.get",
      resourceId: "iabc",
    });
    expect(err.message).toContain("doesn't exist");
  });

  it("gives a clean error for a body that is not JSON", async () => {
    const srv = await scripted((res) => {
      res.writeHead(409, { "Content-Type": "text/html" });
      res.end("<html><body>conflict</body></html>");
    });
    const err = await failure(client(srv.url).pauseSandbox("iabc"));
    expect(err).toMatchObject({ code: "conflict", status: 409, operation: "sandboxes.pause" });
    expect(err.message).toContain("conflict");
  });

  it("sends the API key in X-API-Key and never shows it in an error", async () => {
    const srv = await scripted(json(401, { code: 401, message: `Invalid API key ${KEY}` }));
    const err = await failure(client(srv.url).getSandbox("iabc"));
    expect(srv.seen[0]?.headers["x-api-key"]).toBe(KEY);
    expect(err.code).toBe("unauthenticated");
    expect(err.message).not.toContain(KEY);
  });

  it("fails with contract_violation naming the field the service got wrong", async () => {
    const srv = await scripted(json(200, { ...detail, memoryMB: 64 }));
    const err = await failure(client(srv.url).getSandbox("iabc"));
    expect(err.code).toBe("contract_violation");
    expect(err.field).toBe("response.memoryMB");
  });

  it("fails with contract_violation when the success status is not the contract's", async () => {
    const srv = await scripted(json(200, detail));
    const err = await failure(client(srv.url).createSandbox({ templateID: "base" }));
    expect(err.code).toBe("contract_violation");
    expect(err.message).toContain("201");
  });

  it("fails with timeout when the service does not answer in time", async () => {
    const srv = await scripted(() => undefined);
    const err = await failure(client(srv.url).getSandbox("iabc", { timeoutMs: 200 }));
    expect(err.code).toBe("timeout");
  });

  it("fails with canceled when the caller aborts", async () => {
    const srv = await scripted(() => undefined);
    const controller = new AbortController();
    const pending = client(srv.url).getSandbox("iabc", { signal: controller.signal });
    controller.abort();
    expect((await failure(pending)).code).toBe("canceled");
  });
});

describe("createControlClient() lists", () => {
  it("pages through X-Next-Token until it is absent", async () => {
    const srv = await scripted(
      json(200, [listed("ia"), listed("ib")], { "X-Next-Token": "t1" }),
      json(200, [listed("ic")], { "X-Next-Token": "t2" }),
      json(200, []),
    );
    const ids: string[] = [];
    for await (const s of client(srv.url).listSandboxesV2({ limit: 2 })) ids.push(s.sandboxID);
    expect(ids).toEqual(["ia", "ib", "ic"]);
    expect(srv.seen.map((r) => r.url)).toEqual([
      "/v2/sandboxes?limit=2",
      "/v2/sandboxes?nextToken=t1&limit=2",
      "/v2/sandboxes?nextToken=t2&limit=2",
    ]);
  });

  it("returns one page with its cursor and the running total", async () => {
    const srv = await scripted(
      json(200, [listed("ia")], { "X-Next-Token": "t1", "X-Total-Running": "7" }),
    );
    const page = await client(srv.url).listSandboxesV2Page({ state: ["running", "paused"] });
    expect(page).toMatchObject({ nextToken: "t1", totalRunning: 7 });
    expect(srv.seen[0]?.url).toBe("/v2/sandboxes?state=running,paused");
  });

  it("encodes the metadata filter as the official SDK does", async () => {
    const srv = await scripted(json(200, []));
    await client(srv.url).listSandboxes({ metadata: { k: "v", "a b": "c&d" } });
    expect(srv.seen[0]?.url).toBe("/sandboxes?metadata=k%3Dv%26a%252520b%3Dc%252526d");
  });

  it("pages snapshots", async () => {
    const srv = await scripted(
      json(200, [{ snapshotID: "s1:default", names: [] }], { "X-Next-Token": "n" }),
      json(200, [{ snapshotID: "s2:default", names: [] }]),
    );
    const ids: string[] = [];
    for await (const s of client(srv.url).listSnapshots({ sandboxID: "iabc" }))
      ids.push(s.snapshotID);
    expect(ids).toEqual(["s1:default", "s2:default"]);
  });

  it("fails when the service repeats a page cursor", async () => {
    const srv = await scripted(
      json(200, [{ snapshotID: "s1:default", names: [] }], { "X-Next-Token": "same" }),
    );
    const run = async () => {
      for await (const _ of client(srv.url).listSnapshots()) {
        // drain
      }
    };
    expect((await failure(run())).code).toBe("contract_violation");
  });
});
