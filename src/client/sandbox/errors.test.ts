import { Code, ConnectError } from "@connectrpc/connect";
import { SandboxIacError } from "../../errors";
import {
  commandFailed,
  commandResultOf,
  fromFetchFailure,
  fromHttpStatus,
  fromRpcError,
} from "./errors";

const scope = { operation: "files.read", sandboxID: "isbx1", resourceId: "/a.txt" };

describe("fromRpcError()", () => {
  it.each([
    [Code.NotFound, "not_found"],
    [Code.InvalidArgument, "invalid_argument"],
    [Code.Unauthenticated, "unauthenticated"],
    [Code.AlreadyExists, "already_exists"],
    [Code.DeadlineExceeded, "timeout"],
    [Code.Canceled, "timeout"],
    [Code.Unavailable, "unavailable"],
    [Code.Internal, "internal"],
    [Code.Unknown, "internal"],
    [Code.PermissionDenied, "permission_denied"],
    [Code.ResourceExhausted, "rate_limited"],
    [Code.Unimplemented, "unsupported"],
    [Code.FailedPrecondition, "conflict"],
  ])("maps Connect code %s to %s", (code, expected) => {
    const err = fromRpcError(new ConnectError("boom", code), scope);
    expect(err.code).toBe(expected);
  });

  it("carries the operation, the resource, the rpc code, the sandbox and the cause", () => {
    const cause = new ConnectError("file not found: /a.txt", Code.NotFound);
    const err = fromRpcError(cause, scope);
    expect(err).toBeInstanceOf(SandboxIacError);
    expect(err).toMatchObject({
      operation: "files.read",
      resourceId: "/a.txt",
      rpcCode: "not_found",
    });
    expect(err.cause).toBe(cause);
    expect(err.message).toContain("file not found: /a.txt");
    expect(err.message).toContain("isbx1");
  });

  it("reports canceled when the caller's own signal aborted", () => {
    const controller = new AbortController();
    controller.abort();
    expect(
      fromRpcError(new ConnectError("x", Code.Canceled), { ...scope, signal: controller.signal })
        .code,
    ).toBe("canceled");
  });

  it("reports canceled when the caller's signal aborted with a reason of its own", () => {
    const controller = new AbortController();
    const reason = new SandboxIacError("canceled", "Terraform asked the provider to stop", {
      operation: "terraform.stop",
    });
    controller.abort(reason);
    // What connect throws for such an abort: the reason, wrapped.
    const thrown = ConnectError.from(reason);
    const err = fromRpcError(thrown, { ...scope, signal: controller.signal });
    expect(err.code).toBe("canceled");
    expect(err.message).toContain("Terraform asked the provider to stop");
  });

  it("passes project errors through unchanged", () => {
    const original = new SandboxIacError("conflict", "x", { operation: "o" });
    expect(fromRpcError(original, scope)).toBe(original);
  });
});

describe("fromHttpStatus()", () => {
  it.each([
    [400, "invalid_argument"],
    [401, "unauthenticated"],
    [403, "permission_denied"],
    [404, "not_found"],
    [409, "conflict"],
    [429, "rate_limited"],
    [502, "unavailable"],
    [503, "unavailable"],
    [504, "timeout"],
    [507, "rate_limited"],
    [500, "internal"],
  ])("maps HTTP %s to %s", (status, expected) => {
    expect(fromHttpStatus(status, "", scope).code).toBe(expected);
  });

  it("uses the message of envd's JSON error body", () => {
    const err = fromHttpStatus(
      404,
      JSON.stringify({ code: 404, message: "path '/a.txt' does not exist" }),
      scope,
    );
    expect(err).toMatchObject({ code: "not_found", status: 404, rpcCode: "not_found" });
    expect(err.message).toContain("path '/a.txt' does not exist");
  });

  it("keeps a short text body that is not JSON", () => {
    expect(fromHttpStatus(502, "Bad Gateway", scope).message).toContain("HTTP 502: Bad Gateway");
  });

  it("never shows an access token echoed in a body", () => {
    const token = "a".repeat(64);
    expect(fromHttpStatus(401, `X-Access-Token: ${token}`, scope).message).not.toContain(token);
  });
});

describe("fromFetchFailure()", () => {
  it("maps a refused connection to unavailable", () => {
    const err = fromFetchFailure(
      new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") }),
      scope,
    );
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain("ECONNREFUSED");
  });

  it("maps a deadline to timeout", () => {
    expect(fromFetchFailure(new DOMException("t", "TimeoutError"), scope).code).toBe("timeout");
  });
});

describe("commandFailed()", () => {
  it("quotes the command, the exit code, the sandbox and the stderr tail", () => {
    const err = commandFailed(
      "ls /nope",
      { exitCode: 2, stdout: "", stderr: "ls: cannot access '/nope'\n" },
      { operation: "process.run", sandboxID: "isbx1", pid: 42 },
    );
    expect(err.code).toBe("command_failed");
    expect(err.message).toContain('"ls /nope"');
    expect(err.message).toContain("exited with code 2");
    expect(err.message).toContain("isbx1");
    expect(err.message).toContain("ls: cannot access '/nope'");
    expect(commandResultOf(err)).toEqual({
      exitCode: 2,
      stdout: "",
      stderr: "ls: cannot access '/nope'\n",
    });
  });

  it("quotes only the tail of a long stderr", () => {
    const stderr = `${"x".repeat(10_000)}LAST`;
    const err = commandFailed(
      "c",
      { exitCode: 1, stdout: "", stderr },
      { operation: "process.run", sandboxID: "isbx1" },
    );
    expect(err.message.length).toBeLessThan(3000);
    expect(err.message).toContain("LAST");
    expect(err.result.stderr).toBe(stderr);
  });

  it("says the process was stopped when a signal killed it", () => {
    const err = commandFailed(
      "sleep 9",
      { exitCode: -1, stdout: "", stderr: "" },
      { operation: "process.run", sandboxID: "isbx1", status: "signal: killed" },
    );
    expect(err.message).toContain("was stopped (signal: killed)");
  });

  it("has no result on other errors", () => {
    expect(
      commandResultOf(new SandboxIacError("internal", "x", { operation: "o" })),
    ).toBeUndefined();
  });
});
