import { Code } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { errnoReport } from "./errno";
import { ERROR_CODE_BY_RPC_CODE, httpStatusForRpcCode, rpcCodeForHttpStatus } from "./envd-status";

const ALL_CODES = Object.values(Code).filter((c): c is Code => typeof c === "number");

describe("envd status <-> Connect code <-> error code", () => {
  it("has a status and an error code for each of the 16 Connect codes", () => {
    expect(ALL_CODES).toHaveLength(16);
    for (const code of ALL_CODES) {
      expect([codeToString(code), typeof httpStatusForRpcCode(code)]).toEqual([
        codeToString(code),
        "number",
      ]);
      expect(ERROR_CODE_BY_RPC_CODE[code]).toBeDefined();
    }
  });

  it("reads every code's status back as a code with the same project error code", () => {
    // 409 reads back as aborted (conflict): envd answers an existing file with 409 too.
    const readsBackAs: Partial<Record<Code, string>> = { [Code.AlreadyExists]: "conflict" };
    for (const code of ALL_CODES) {
      const back = ERROR_CODE_BY_RPC_CODE[rpcCodeForHttpStatus(httpStatusForRpcCode(code))];
      expect([codeToString(code), back]).toEqual([
        codeToString(code),
        readsBackAs[code] ?? ERROR_CODE_BY_RPC_CODE[code],
      ]);
    }
  });

  it("reads the statuses envd and proxies answer with", () => {
    const table = [400, 401, 403, 404, 409, 416, 429, 499, 500, 501, 502, 503, 504, 507, 418].map(
      (s) => [s, codeToString(rpcCodeForHttpStatus(s))],
    );
    expect(table).toEqual([
      [400, "invalid_argument"],
      [401, "unauthenticated"],
      [403, "permission_denied"],
      [404, "not_found"],
      [409, "aborted"],
      [416, "invalid_argument"],
      [429, "resource_exhausted"],
      [499, "canceled"],
      [500, "internal"],
      [501, "unimplemented"],
      [502, "unavailable"],
      [503, "unavailable"],
      [504, "deadline_exceeded"],
      [507, "resource_exhausted"],
      [418, "unknown"],
    ]);
  });

  it("gives a filesystem error the same project code on the plain routes as on the RPCs", () => {
    for (const errno of ["ENOENT", "EACCES", "EEXIST", "ENOTEMPTY", "EISDIR", "ENOSPC", "ELOOP"]) {
      const report = errnoReport(Object.assign(new Error(errno), { code: errno }));
      if (!report) throw new Error(`no report for ${errno}`);
      const overHttp = ERROR_CODE_BY_RPC_CODE[rpcCodeForHttpStatus(report.status)];
      const overRpc = ERROR_CODE_BY_RPC_CODE[report.code];
      // A link loop is failed_precondition on the RPCs (as envd) but the caller's path at fault (400) on /files.
      const expected = errno === "ELOOP" ? "invalid_argument" : overRpc;
      const exists = errno === "EEXIST" ? "conflict" : expected;
      expect([errno, overHttp]).toEqual([errno, exists]);
    }
  });
});
