/**
 * The control API's HTTP statuses and the project's error codes, both
 * directions in one table: the client reads a status into a code
 * ({@link codeForStatus}), the local service answers a code with a status
 * ({@link statusForCode}). Nothing else in the tree maps one to the other.
 *
 * @module
 */
import type { ErrorCode } from "../errors";

/**
 * Code → the status the service answers it with. Several codes share a status
 * (`already_exists` and `conflict` are both 409; every failure of ours that is
 * not the caller's is 500), so reading the status back gives the first code
 * of {@link CODE_FOR_STATUS}, not always the same one.
 */
export const STATUS_FOR_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  rate_limited: 429,
  canceled: 499,
  internal: 500,
  command_failed: 500,
  build_failed: 500,
  unsupported: 501,
  contract_violation: 502,
  unavailable: 503,
  timeout: 504,
});

/**
 * Status → code, for the statuses that mean one thing. 502 is `unavailable`
 * (a proxy could not reach the service), not `contract_violation`: a client
 * cannot tell a gateway's 502 from ours.
 */
export const CODE_FOR_STATUS: Readonly<Record<number, ErrorCode>> = Object.freeze({
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  405: "unsupported",
  409: "conflict",
  413: "invalid_argument",
  429: "rate_limited",
  499: "canceled",
  500: "internal",
  501: "unsupported",
  502: "unavailable",
  503: "unavailable",
  504: "timeout",
  507: "rate_limited",
});

/** The error code for an HTTP status; `internal` for a status the table does not list. */
export function codeForStatus(status: number): ErrorCode {
  return CODE_FOR_STATUS[status] ?? "internal";
}

/** The HTTP status the service answers `code` with. */
export function statusForCode(code: ErrorCode): number {
  return STATUS_FOR_CODE[code];
}
