import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { SandboxIacError } from "../../errors";
import { CONTROL_HEADERS } from "../../wire/control";
import { serviceError, type Route } from "./http";
import { createRouter } from "./router";

const API_KEY = "e2b_0123456789abcdef0123456789abcdef01234567";

/** Serves `routes` through the real router on a loopback port. */
async function serve(routes: Route[]): Promise<{ url: string; logs: string[]; close(): void }> {
  const logs: string[] = [];
  const dispatch = createRouter(routes, API_KEY, (line) => logs.push(line));
  const server = http.createServer((req, res) => void dispatch(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, logs, close: () => server.close() };
}

async function post(url: string, body: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { [CONTROL_HEADERS.apiKey]: API_KEY, "Content-Type": "application/json" },
    body,
  });
  return { status: res.status, body: await res.json() };
}

describe("control router errors", () => {
  const routes: Route[] = [
    {
      method: "POST",
      pattern: "/echo",
      handler: async (req) => ({ status: 200, body: await req.json() }),
    },
    {
      method: "POST",
      pattern: "/missing/:id",
      handler: (req) =>
        Promise.reject(serviceError("not_found", `thing ${req.params.id} not found`)),
    },
    {
      method: "POST",
      pattern: "/full",
      handler: () =>
        Promise.reject(serviceError("rate_limited", "the volume is out of space", { status: 507 })),
    },
    {
      method: "POST",
      pattern: "/deep",
      handler: () =>
        Promise.reject(
          new SandboxIacError("unavailable", "the runtime is gone", {
            operation: "runtime.start",
          }),
        ),
    },
  ];
  let svc: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    svc = await serve(routes);
  });
  afterAll(() => svc.close());

  it("never quotes an invalid JSON body, which may hold a secret", async () => {
    // JSON.parse's own message would quote this one ("Unexpected token 'h', ...").
    const secret = "hunter2";
    const answer = await post(`${svc.url}/echo`, `{"value": ${secret}}`);
    expect(answer.status).toBe(400);
    const text = JSON.stringify(answer.body);
    expect(text).toContain("not valid JSON");
    expect(text).not.toContain(secret);
  });

  it("answers a body over the limit with 413", async () => {
    const answer = await post(`${svc.url}/echo`, JSON.stringify("x".repeat(9 * 1024 * 1024)));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 413 });
    // The refused connection is closed, not left for the next request to trip on.
    expect((await post(`${svc.url}/echo`, "[1]")).body).toEqual([1]);
  });

  it("answers a handler's error code with its status and the handler's message alone", async () => {
    const answer = await post(`${svc.url}/missing/abc`, "{}");
    expect(answer).toEqual({ status: 404, body: { code: 404, message: "thing abc not found" } });
  });

  it("answers the status an error carries when it is not its code's usual one", async () => {
    const answer = await post(`${svc.url}/full`, "{}");
    expect(answer).toEqual({
      status: 507,
      body: { code: 507, message: "the volume is out of space" },
    });
  });

  it("keeps the operation in the message of an error raised below the handlers", async () => {
    const answer = await post(`${svc.url}/deep`, "{}");
    expect(answer).toEqual({
      status: 503,
      body: { code: 503, message: "runtime.start failed: the runtime is gone" },
    });
    expect(svc.logs.some((l) => l.includes("the runtime is gone"))).toBe(true);
  });
});
