/**
 * Calling the local service in behaviour tests: a tiny control-API caller over
 * `fetch`, sandbox creation, and a command run through the sandbox proxy.
 * The service itself is started by `test/support/service.ts`.
 */
/** A JSON answer of the service. */
export interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** How {@link call} sends a request beyond its method, route and JSON body. */
export interface CallOptions {
  /**
   * The `X-API-Key` to send; `null` sends none.
   * @default the service's key
   */
  apiKey?: string | null | undefined;
  /** A body sent as is (used when no JSON body is given). */
  raw?: Buffer | string | undefined;
  /** Extra headers. */
  headers?: Record<string, string> | undefined;
}

/**
 * Calls the control API: `route` is a path under `apiUrl` or an absolute URL
 * (e.g. an upload link the service handed out). A string `body` is sent as
 * is with the JSON content type (to send malformed JSON); any other body is
 * JSON-encoded.
 */
export async function call(
  svc: { apiUrl: string; apiKey: string },
  method: string,
  route: string,
  body?: unknown,
  opts: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.apiKey !== null) headers["X-API-Key"] = opts.apiKey ?? svc.apiKey;
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    headers["Content-Type"] = "application/json";
  } else if (opts.raw !== undefined) {
    init.body = opts.raw;
  }
  const res = await fetch(route.startsWith("http") ? route : `${svc.apiUrl}${route}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // plain text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Creates a sandbox and returns its `Sandbox` body. */
export async function createSandbox(
  svc: { apiUrl: string; apiKey: string },
  body: Record<string, unknown> = {},
  route = "/sandboxes",
): Promise<{ sandboxID: string; envdAccessToken?: string }> {
  const res = await call(svc, "POST", route, { templateID: "base", timeout: 300, ...body });
  if (res.status !== 201)
    throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { sandboxID: string; envdAccessToken?: string };
}

/** Runs a shell command in a sandbox through the service's proxy (Connect JSON stream). */
export async function runThroughProxy(
  svc: { sandboxUrl: string },
  sandboxID: string,
  cmd: string,
  token?: string,
): Promise<{ status: number; stdout: string; exitCode: number | undefined }> {
  const msg = Buffer.from(
    JSON.stringify({
      process: { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: {} },
      stdin: false,
    }),
  );
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt8(0, 0);
  frame.writeUInt32BE(msg.length, 1);
  msg.copy(frame, 5);
  const headers: Record<string, string> = {
    "Content-Type": "application/connect+json",
    "Connect-Protocol-Version": "1",
    "E2b-Sandbox-Id": sandboxID,
    "E2b-Sandbox-Port": "49983",
  };
  if (token) headers["X-Access-Token"] = token;
  const res = await fetch(`${svc.sandboxUrl}/process.Process/Start`, {
    method: "POST",
    headers,
    body: frame,
  });
  const buf = Buffer.from(await res.arrayBuffer());
  // Errors before the stream (401, 502) are plain JSON, not envelopes.
  if (res.status !== 200) return { status: res.status, stdout: "", exitCode: undefined };
  let stdout = "";
  let exitCode: number | undefined;
  for (let off = 0; off + 5 <= buf.length;) {
    const flags = buf.readUInt8(off);
    const len = buf.readUInt32BE(off + 1);
    const json = JSON.parse(buf.subarray(off + 5, off + 5 + len).toString("utf8")) as {
      event?: { data?: { stdout?: string }; end?: { exitCode?: number; exited?: boolean } };
    };
    off += 5 + len;
    if (flags & 2) continue;
    if (json.event?.data?.stdout)
      stdout += Buffer.from(json.event.data.stdout, "base64").toString("utf8");
    if (json.event?.end) exitCode = json.event.end.exitCode ?? 0;
  }
  return { status: res.status, stdout, exitCode };
}
