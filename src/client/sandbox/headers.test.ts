import { createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { Filesystem } from "../../gen/envd/filesystem/filesystem_pb";
import { Process, StartResponseSchema } from "../../gen/envd/process/process_pb";
import { createSandboxClient } from "./client";
import { baseHeaders, basicUserAuth, mergeHeaders } from "./headers";
import { neverFetch } from "../../../test/support/never-transports";

describe("baseHeaders()", () => {
  it("adds the routing headers and the access token", () => {
    expect(baseHeaders({ sandboxID: "isbx1", accessToken: "tok" })).toEqual({
      "E2b-Sandbox-Id": "isbx1",
      "E2b-Sandbox-Port": "49983",
      "X-Access-Token": "tok",
    });
  });

  it("sends no access token header when there is no token", () => {
    expect(Object.keys(baseHeaders({ sandboxID: "isbx1" }))).not.toContain("X-Access-Token");
  });

  it("lets configured headers win regardless of case", () => {
    const h = baseHeaders({ sandboxID: "isbx1", headers: { "e2b-sandbox-port": "8080" } });
    expect(h).toEqual({ "E2b-Sandbox-Id": "isbx1", "e2b-sandbox-port": "8080" });
  });
});

describe("mergeHeaders()", () => {
  it("keeps one spelling per header name, the last one", () => {
    expect(mergeHeaders({ "X-A": "1", b: "2" }, { "x-a": "3" })).toEqual({ b: "2", "x-a": "3" });
  });
});

describe("basicUserAuth()", () => {
  it("encodes the user with an empty password", () => {
    expect(basicUserAuth("user")).toBe(`Basic ${Buffer.from("user:").toString("base64")}`);
    expect(basicUserAuth("root")).toBe("Basic cm9vdDo=");
  });
});

describe("headers on RPCs", () => {
  function recordingClient(options: { user?: string; accessToken?: string } = {}) {
    const seen: Record<string, Headers> = {};
    const timeouts: Record<string, number | undefined> = {};
    const transport = createRouterTransport((router) => {
      router.service(Process, {
        async *start(_req, context) {
          seen.start = context.requestHeader;
          timeouts.start = context.timeoutMs();
          yield create(StartResponseSchema, {
            event: { event: { case: "start", value: { pid: 7 } } },
          });
          yield create(StartResponseSchema, {
            event: {
              event: {
                case: "data",
                value: { output: { case: "stdout", value: new TextEncoder().encode("hi\n") } },
              },
            },
          });
          yield create(StartResponseSchema, { event: { event: { case: "keepalive", value: {} } } });
          yield create(StartResponseSchema, {
            event: {
              event: { case: "end", value: { exitCode: 0, exited: true, status: "exit status 0" } },
            },
          });
        },
        async list(_req, context) {
          seen.list = context.requestHeader;
          timeouts.list = context.timeoutMs();
          return { processes: [] };
        },
      });
      router.service(Filesystem, {
        async stat(req, context) {
          seen.stat = context.requestHeader;
          return { entry: { name: "a", path: req.path, type: 1, size: 3n, mode: 0o644 } };
        },
      });
    });
    const client = createSandboxClient({
      sandboxID: "isbx1",
      baseUrl: "http://127.0.0.1:1",
      transport,
      fetch: neverFetch(),
      timeoutMs: 5000,
      ...options,
    });
    return { client, seen, timeouts };
  }

  it("sends the token, the routing headers and the user on start, with keepalive and no deadline", async () => {
    const { client, seen, timeouts } = recordingClient({ accessToken: "tok", user: "root" });
    const result = await client.run("echo hi");
    expect(result).toMatchObject({ exitCode: 0, stdout: "hi\n", stderr: "" });
    expect(seen.start?.get("x-access-token")).toBe("tok");
    expect(seen.start?.get("e2b-sandbox-id")).toBe("isbx1");
    expect(seen.start?.get("authorization")).toBe("Basic cm9vdDo=");
    expect(seen.start?.get("keepalive-ping-interval")).toBe("50");
    expect(timeouts.start).toBeUndefined();
  });

  it("sends the per-call timeout of a start as its deadline", async () => {
    const { client, timeouts } = recordingClient();
    await client.run("echo hi", { timeoutMs: 1234 });
    expect(timeouts.start).toBeGreaterThan(0);
    expect(timeouts.start).toBeLessThanOrEqual(1234);
  });

  it("sends the client deadline and no user or keepalive on unary calls", async () => {
    const { client, seen, timeouts } = recordingClient({ accessToken: "tok" });
    await client.list();
    expect(seen.list?.get("authorization")).toBeNull();
    expect(seen.list?.get("keepalive-ping-interval")).toBeNull();
    expect(timeouts.list).toBeGreaterThan(0);
    expect(timeouts.list).toBeLessThanOrEqual(5000);
  });

  it("maps entries to friendly types", async () => {
    const { client, seen } = recordingClient({ user: "user" });
    const entry = await client.stat("/x/a");
    expect(entry).toMatchObject({ name: "a", path: "/x/a", type: "file", size: 3, mode: 0o644 });
    expect(seen.stat?.get("authorization")).toBe("Basic dXNlcjo=");
  });
});
