import { ERROR_CODES } from "../errors";
import { CODE_FOR_STATUS, codeForStatus, STATUS_FOR_CODE, statusForCode } from "./control-status";

describe("control API status <-> error code", () => {
  it("reads every code back from the status the service answers it with", () => {
    // Codes that share a status read back as the one the status stands for.
    const sharesStatus: Record<string, string> = {
      already_exists: "conflict",
      command_failed: "internal",
      build_failed: "internal",
      contract_violation: "unavailable",
    };
    for (const code of ERROR_CODES) {
      expect([code, codeForStatus(statusForCode(code))]).toEqual([
        code,
        sharesStatus[code] ?? code,
      ]);
    }
  });

  it("answers every listed status's code with a status that reads back as the same code", () => {
    for (const [status, code] of Object.entries(CODE_FOR_STATUS)) {
      expect([status, codeForStatus(STATUS_FOR_CODE[code])]).toEqual([status, code]);
    }
  });

  it("maps the documented statuses to their codes and anything else to internal", () => {
    const table = [400, 401, 403, 404, 409, 413, 429, 500, 502, 503, 504, 507, 410, 418].map(
      (s) => [s, codeForStatus(s)],
    );
    expect(table).toEqual([
      [400, "invalid_argument"],
      [401, "unauthenticated"],
      [403, "permission_denied"],
      [404, "not_found"],
      [409, "conflict"],
      [413, "invalid_argument"],
      [429, "rate_limited"],
      [500, "internal"],
      [502, "unavailable"],
      [503, "unavailable"],
      [504, "timeout"],
      [507, "rate_limited"],
      [410, "internal"],
      [418, "internal"],
    ]);
  });

  it("has a status for every code of the closed set", () => {
    expect(Object.keys(STATUS_FOR_CODE).sort()).toEqual([...ERROR_CODES].sort());
  });
});
