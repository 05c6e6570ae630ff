/**
 * The control client keeps the service's answer on every error path, against
 * the REAL local service: calls whose success has no body (a build start, a
 * v1 template update) used to cancel a body openapi-fetch had already read,
 * and threw "ReadableStream is locked" instead of the service's status and
 * message.
 */
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import { controlClientOf, startService, type TestService } from "../support/service";

jest.setTimeout(120_000);

let svc: TestService;
let api: ControlClient;

beforeAll(async () => {
  svc = await startService();
  api = controlClientOf(svc);
});

afterAll(async () => {
  await svc?.close();
});

async function failureOf(call: Promise<unknown>): Promise<SandboxIacError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!SandboxIacError.is(err)) throw new Error(`expected a SandboxIacError, got ${String(err)}`);
  return err;
}

describe("control client error answers", () => {
  it("a refused build start keeps the service's status and message", async () => {
    const err = await failureOf(
      api.startTemplateBuildV2("no-such-template", "00000000-0000-4000-8000-000000000000", {
        fromTemplate: "base",
      }),
    );
    expect(err.message).not.toContain("ReadableStream");
    expect(err.status).toBe(404);
    expect(err.code).toBe("not_found");
    expect(err.message).toMatch(/no-such-template|not found/i);
  });

  it("a refused v1 template update keeps the service's status and message", async () => {
    const err = await failureOf(api.updateTemplate("no-such-template", { public: true }));
    expect(err.message).not.toContain("ReadableStream");
    expect(err.status).toBe(404);
    expect(err.code).toBe("not_found");
  });

  function clientWith(options: { apiUrl: string; apiKey?: string }): ControlClient {
    return createControlClient({
      config: resolveConfig({ ...options, env: {} }),
      log: () => undefined,
    });
  }

  it("a wrong key names its source and the local fix, never e2b.dev for a local service", async () => {
    const err = await failureOf(
      clientWith({ apiUrl: svc.apiUrl, apiKey: "e2b_0000000000000000deadbeef" }).listSandboxes(),
    );
    expect(err.code).toBe("unauthenticated");
    expect(err.status).toBe(401);
    expect(err.message).toContain(`the service at ${svc.apiUrl} refused the API key from apiKey`);
    expect(err.message).toContain("sandbox-iac serve");
    expect(err.message).not.toContain("e2b.dev");
  });

  it("a missing key reads differently from a wrong one, naming the variable to set", async () => {
    const err = await failureOf(clientWith({ apiUrl: svc.apiUrl }).listSandboxes());
    expect(err.code).toBe("unauthenticated");
    expect(err.message).toContain(`no API key was sent to ${svc.apiUrl}`);
    expect(err.message).toContain("set E2B_API_KEY (or apiKey)");
    expect(err.message).not.toContain("refused");
  });

  it("an unreachable service shows the URL tried, where it came from, and `sandbox-iac serve`", async () => {
    // A port nothing listens on: one the system gave and took back.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((resolve) => probe.close(resolve));
    const err = await failureOf(
      clientWith({ apiUrl: url, apiKey: svc.apiKey }).listSandboxes(undefined, {
        timeoutMs: 20_000,
      }),
    );
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain(`cannot connect to ${url} (ECONNREFUSED; from apiUrl)`);
    expect(err.message).toContain("from apiUrl");
    expect(err.message).toContain("start the local service with `sandbox-iac serve`");
  });
});
