import { call, createSandbox } from "./support";
import { startService, type TestService } from "../support/service";

let svc: TestService;
let id: string;

beforeAll(async () => {
  svc = await startService();
  id = (await createSandbox(svc)).sandboxID;
});

afterAll(async () => {
  await svc?.close();
});

const unknown = "izzzzzzzzzzzzzzzzzzzz";

// [title, method, path (":id" = a live sandbox), body (string = raw), expected status]
const cases: [string, string, string, unknown, number][] = [
  ["malformed JSON on create", "POST", "/sandboxes", "{not json", 400],
  ["no body on create", "POST", "/v2/sandboxes", undefined, 400],
  ["a body that is an array", "POST", "/sandboxes", [1, 2], 400],
  ["templateID of the wrong type", "POST", "/sandboxes", { templateID: 42 }, 400],
  ["a zero timeout on create", "POST", "/sandboxes", { templateID: "base", timeout: 0 }, 400],
  [
    "a negative timeout on create",
    "POST",
    "/v2/sandboxes",
    { templateID: "base", timeout: -1 },
    400,
  ],
  ["a fractional timeout", "POST", "/sandboxes", { templateID: "base", timeout: 1.5 }, 400],
  ["a timeout above int32", "POST", "/sandboxes", { templateID: "base", timeout: 2 ** 40 }, 400],
  [
    "metadata values that are not strings",
    "POST",
    "/sandboxes",
    { templateID: "base", metadata: { a: 1 } },
    400,
  ],
  [
    "envVars that are not an object",
    "POST",
    "/sandboxes",
    { templateID: "base", envVars: "A=1" },
    400,
  ],
  [
    "secure that is not a boolean",
    "POST",
    "/sandboxes",
    { templateID: "base", secure: "yes" },
    400,
  ],
  ["an unknown template", "POST", "/sandboxes", { templateID: "nope" }, 404],
  ["an unknown id on get", "GET", `/sandboxes/${unknown}`, undefined, 404],
  ["a malformed id on get", "GET", "/sandboxes/NOT_AN_ID", undefined, 400],
  ["an id with two dashes", "GET", "/sandboxes/a-b-c", undefined, 400],
  ["an unknown id on kill", "DELETE", `/sandboxes/${unknown}`, undefined, 404],
  ["an unknown id on pause", "POST", `/sandboxes/${unknown}/pause`, {}, 404],
  ["a pause body of the wrong type", "POST", "/sandboxes/:id/pause", { memory: "no" }, 400],
  ["an unknown id on resume", "POST", `/sandboxes/${unknown}/resume`, { timeout: 10 }, 404],
  ["a zero timeout on resume", "POST", "/sandboxes/:id/resume", { timeout: 0 }, 400],
  ["a connect without timeout", "POST", "/sandboxes/:id/connect", {}, 400],
  ["a negative connect timeout", "POST", "/v2/sandboxes/:id/connect", { timeout: -3 }, 400],
  ["a connect with malformed JSON", "POST", "/sandboxes/:id/connect", "{", 400],
  ["an unknown id on timeout", "POST", `/sandboxes/${unknown}/timeout`, { timeout: 5 }, 404],
  ["a timeout of the wrong type", "POST", "/sandboxes/:id/timeout", { timeout: "5" }, 400],
  ["a timeout body without its field", "POST", "/sandboxes/:id/timeout", {}, 400],
  ["a refresh above 3600", "POST", "/sandboxes/:id/refreshes", { duration: 3601 }, 400],
  ["a negative refresh", "POST", "/sandboxes/:id/refreshes", { duration: -1 }, 400],
  ["an unknown id on refresh", "POST", `/sandboxes/${unknown}/refreshes`, {}, 404],
  ["limit 0", "GET", "/v2/sandboxes?limit=0", undefined, 400],
  ["limit 101", "GET", "/v2/sandboxes?limit=101", undefined, 400],
  ["a non-numeric limit", "GET", "/v2/sandboxes?limit=ten", undefined, 400],
  ["a bad state", "GET", "/v2/sandboxes?state=running,sleeping", undefined, 400],
  ["a bad order", "GET", "/v2/sandboxes?order=up", undefined, 400],
  ["a bad nextToken", "GET", "/v2/sandboxes?nextToken=garbage!!", undefined, 400],
  [
    "a decodable but meaningless nextToken",
    "GET",
    `/v2/sandboxes?nextToken=${Buffer.from("x").toString("base64url")}`,
    undefined,
    400,
  ],
  ["bad metadata encoding", "GET", "/v2/sandboxes?metadata=a%3D%25E0%25A4%25A", undefined, 400],
  ["bad metadata on the deprecated list", "GET", "/sandboxes?metadata=%25zz%3D1", undefined, 400],
  ["a bad startedAfter", "GET", "/v2/sandboxes?startedAfter=yesterday", undefined, 400],
  ["negative metrics start", "GET", "/sandboxes/:id/metrics?start=-1", undefined, 400],
  ["non-numeric metrics end", "GET", "/sandboxes/:id/metrics?end=soon", undefined, 400],
  ["metrics start after end", "GET", "/sandboxes/:id/metrics?start=20&end=10", undefined, 400],
  ["metrics of an unknown id", "GET", `/sandboxes/${unknown}/metrics`, undefined, 404],
  ["batch metrics without ids", "GET", "/sandboxes/metrics", undefined, 400],
  [
    "batch metrics with more than 100 ids",
    "GET",
    `/sandboxes/metrics?sandbox_ids=${Array.from({ length: 101 }, (_, i) => `i${i}`).join(",")}`,
    undefined,
    400,
  ],
  [
    "batch metrics with a malformed id",
    "GET",
    "/sandboxes/metrics?sandbox_ids=BAD_ID",
    undefined,
    400,
  ],
  ["logs of an unknown id", "GET", `/v2/sandboxes/${unknown}/logs`, undefined, 404],
  ["a bad log direction", "GET", "/v2/sandboxes/:id/logs?direction=sideways", undefined, 400],
  ["a bad log level", "GET", "/v2/sandboxes/:id/logs?level=loud", undefined, 400],
  ["a log limit above 1000", "GET", "/v2/sandboxes/:id/logs?limit=1001", undefined, 400],
  ["an unknown route", "GET", "/no/such/route", undefined, 404],
  ["a wrong method", "PUT", "/sandboxes", undefined, 405],
];

describe("bad input", () => {
  it.each(cases)(
    "fails when given %s with a 4xx JSON error",
    async (_title, method, route, body, status) => {
      const res = await call(svc, method, route.replace(":id", id), body);
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(res.body).toEqual({ code: status, message: expect.any(String) });
    },
  );

  it("accepts a chunked request body", async () => {
    const chunks = [Buffer.from('{"templateID":'), Buffer.from('"base","timeout":30}')];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });
    const res = await fetch(`${svc.apiUrl}/sandboxes`, {
      method: "POST",
      headers: { "X-API-Key": svc.apiKey, "Content-Type": "application/json" },
      body: stream,
      duplex: "half",
    });
    expect(res.status).toBe(201);
  });
});
