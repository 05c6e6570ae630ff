/**
 * One table from a filesystem errno to what the caller is told: the reason in
 * words, the Connect code (the RPC routes) and the HTTP status (the plain
 * routes). A client's mistake (a path too long, a read-only location, a link
 * loop, a directory where a file was expected) is never an internal error.
 *
 * @module
 */
import { Code } from "@connectrpc/connect";
import { httpStatusForRpcCode } from "./envd-status";

/** How one errno is reported. */
export interface ErrnoReport {
  /** The reason in words. */
  reason: string;
  /** The Connect code of the RPC routes. */
  code: Code;
  /** The HTTP status of the plain routes. */
  status: number;
}

/** Each errno's reason and code; the status is the code's (envd-status.ts) unless given. */
const TABLE: Record<string, Omit<ErrnoReport, "status"> & { status?: number }> = {
  ENOENT: { reason: "no such file or directory", code: Code.NotFound },
  EACCES: { reason: "permission denied", code: Code.PermissionDenied },
  EPERM: { reason: "operation not permitted", code: Code.PermissionDenied },
  EROFS: {
    reason: "read-only file system: write somewhere writable, such as the home directory",
    code: Code.PermissionDenied,
  },
  EEXIST: { reason: "already exists", code: Code.AlreadyExists },
  ENOTEMPTY: { reason: "directory not empty", code: Code.FailedPrecondition },
  ENOTDIR: {
    reason: "a path component is not a directory",
    code: Code.InvalidArgument,
  },
  EISDIR: { reason: "is a directory", code: Code.InvalidArgument },
  ENAMETOOLONG: {
    reason: "file name too long: each name is at most 255 bytes",
    code: Code.InvalidArgument,
  },
  // A link loop is the caller's path at fault: 400 on the plain routes.
  ELOOP: {
    reason: "too many levels of symbolic links",
    code: Code.FailedPrecondition,
    status: 400,
  },
  EINVAL: { reason: "invalid argument", code: Code.InvalidArgument },
  EXDEV: { reason: "crosses a mount point", code: Code.InvalidArgument },
  EBUSY: {
    reason: "resource busy (a mount point or the root cannot be changed)",
    code: Code.FailedPrecondition,
  },
  ETXTBSY: { reason: "text file busy", code: Code.FailedPrecondition },
  EMLINK: { reason: "too many links", code: Code.ResourceExhausted },
  ENOSPC: { reason: "no space left on device", code: Code.ResourceExhausted },
  EDQUOT: { reason: "disk quota exceeded", code: Code.ResourceExhausted },
  EFBIG: { reason: "file too large", code: Code.ResourceExhausted },
};

/** The report for `err`'s errno, or undefined when it is not a known filesystem error. */
export function errnoReport(err: unknown): ErrnoReport | undefined {
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  const entry = errno === undefined ? undefined : TABLE[errno];
  if (entry === undefined) return undefined;
  return { ...entry, status: entry.status ?? httpStatusForRpcCode(entry.code) };
}
