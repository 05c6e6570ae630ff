/**
 * The in-sandbox interface's failure codes, each mapping once: a plain envd
 * route's HTTP status <-> the Connect code it stands for (both directions: the
 * agent answers with {@link httpStatusForRpcCode}, the client reads with
 * {@link rpcCodeForHttpStatus}), and a Connect code -> the project's error
 * code ({@link ERROR_CODE_BY_RPC_CODE}). The control API's table is
 * `control-status.ts`.
 *
 * @module
 */
import { Code } from "@connectrpc/connect";
import type { ErrorCode } from "../errors";

/**
 * Connect code -> the status a plain envd route answers it with. Unlike
 * Connect's own table, a missing file is 404 and a full disk 507, as envd
 * answers them; codes that share a status read back as the first code of
 * {@link rpcCodeForHttpStatus} for it.
 */
const HTTP_STATUS_FOR_RPC_CODE: Readonly<Record<Code, number>> = Object.freeze({
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 507,
  [Code.FailedPrecondition]: 409,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 416,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
});

/** The status a plain envd route answers a Connect code with. */
export function httpStatusForRpcCode(code: Code): number {
  return HTTP_STATUS_FOR_RPC_CODE[code];
}

/**
 * HTTP status of a plain envd route -> the Connect code it means. Unlike the
 * Connect client's fallback table, 400 and 404 keep their plain meaning here:
 * `/files` answers 404 for a missing file, not for a missing route.
 */
export function rpcCodeForHttpStatus(status: number): Code {
  switch (status) {
    case 400:
    case 406:
    case 416:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
    case 410:
      return Code.NotFound;
    case 409:
      return Code.Aborted;
    case 429:
    case 507:
      return Code.ResourceExhausted;
    case 499:
      return Code.Canceled;
    case 501:
      return Code.Unimplemented;
    case 502:
    case 503:
      return Code.Unavailable;
    case 504:
      return Code.DeadlineExceeded;
    default:
      return status >= 500 ? Code.Internal : Code.Unknown;
  }
}

/**
 * Connect code -> project error code. `canceled` maps to `timeout` (the client
 * makes it `canceled` when the caller's own signal was aborted), because a
 * server-side cancel means the sandbox gave up on the call.
 */
export const ERROR_CODE_BY_RPC_CODE: Readonly<Record<Code, ErrorCode>> = Object.freeze({
  [Code.Canceled]: "timeout",
  [Code.Unknown]: "internal",
  [Code.InvalidArgument]: "invalid_argument",
  [Code.DeadlineExceeded]: "timeout",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "already_exists",
  [Code.PermissionDenied]: "permission_denied",
  [Code.ResourceExhausted]: "rate_limited",
  [Code.FailedPrecondition]: "conflict",
  [Code.Aborted]: "conflict",
  [Code.OutOfRange]: "invalid_argument",
  [Code.Unimplemented]: "unsupported",
  [Code.Internal]: "internal",
  [Code.Unavailable]: "unavailable",
  [Code.DataLoss]: "internal",
  [Code.Unauthenticated]: "unauthenticated",
});
