import { SandboxIacError } from "../../errors";
import { errorFromFailure, errorFromResponse } from "./errors";

const call = { operation: "sandboxes.get", resourceId: "iabc" };

describe("errorFromResponse()", () => {
  it("includes the status, the operation, the id, the server's message and error_code", () => {
    const err = errorFromResponse(call, 503, {
      code: 503,
      message: "no capacity",
      error_code: "sandbox_capacity_unavailable",
    });
    expect(err).toMatchObject({
      code: "unavailable",
      status: 503,
      operation: "sandboxes.get",
      resourceId: "iabc",
    });
    expect(err.message).toBe(
      "sandboxes.get (iabc) failed: HTTP 503: no capacity (sandbox_capacity_unavailable); the service is unreachable or busy; check E2B_API_URL and retry later",
    );
  });

  it("says so when the body carries no message", () => {
    expect(errorFromResponse(call, 500, undefined).message).toContain(
      "the response carried no error message",
    );
  });

  it("gives the call's own fix for a code when it has one", () => {
    const hints = { permission_denied: "ask for a new link" };
    expect(errorFromResponse(call, 403, { message: "expired" }, hints).message).toBe(
      "sandboxes.get (iabc) failed: HTTP 403: expired; ask for a new link",
    );
    expect(errorFromResponse(call, 404, { message: "gone" }, hints).message).toBe(
      "sandboxes.get (iabc) failed: HTTP 404: gone",
    );
  });

  it("redacts an API key the server echoed", () => {
    const key = "e2b_0123456789abcdef0123";
    expect(errorFromResponse(call, 401, `bad key ${key}`).message).not.toContain(key);
  });
});

describe("errorFromFailure()", () => {
  it("maps a refused connection to unavailable", () => {
    const cause = new TypeError("fetch failed", {
      cause: Object.assign(new Error("x"), { code: "ECONNREFUSED" }),
    });
    expect(errorFromFailure(call, cause, { canceled: false }).code).toBe("unavailable");
  });

  it("prefers canceled over timeout when the caller aborted", () => {
    expect(
      errorFromFailure(call, new Error("abort"), { canceled: true, timedOutAfterMs: 10 }).code,
    ).toBe("canceled");
  });

  it("keeps an error that is already a SandboxIacError", () => {
    const original = new SandboxIacError("conflict", "x", { operation: "o" });
    expect(errorFromFailure(call, original, { canceled: false })).toBe(original);
  });
});
