/**
 * The control client keeps the service's answer on every error path, against
 * the REAL local service: calls whose success has no body (a build start, a
 * v1 template update) used to cancel a body openapi-fetch had already read,
 * and threw "ReadableStream is locked" instead of the service's status and
 * message.
 */
import type { ControlClient } from "../../src/client/control";
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
});
