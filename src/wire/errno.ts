/**
 * One table from a filesystem errno to what the caller is told: the reason in
 * words, the Connect code (the RPC routes) and the HTTP status (the plain
 * routes). A client's mistake (a path too long, a read-only location, a link
 * loop, a directory where a file was expected) is never an internal error.
 *
 * @module
 */
import { Code } from "@connectrpc/connect";

/** How one errno is reported. */
export interface ErrnoReport {
  reason: string;
  code: Code;
  status: number;
}

const TABLE: Record<string, ErrnoReport> = {
  ENOENT: { reason: "no such file or directory", code: Code.NotFound, status: 404 },
  EACCES: { reason: "permission denied", code: Code.PermissionDenied, status: 403 },
  EPERM: { reason: "operation not permitted", code: Code.PermissionDenied, status: 403 },
  EROFS: {
    reason: "read-only file system: write somewhere writable, such as the home directory",
    code: Code.PermissionDenied,
    status: 403,
  },
  EEXIST: { reason: "already exists", code: Code.AlreadyExists, status: 409 },
  ENOTEMPTY: { reason: "directory not empty", code: Code.FailedPrecondition, status: 409 },
  ENOTDIR: {
    reason: "a path component is not a directory",
    code: Code.InvalidArgument,
    status: 400,
  },
  EISDIR: { reason: "is a directory", code: Code.InvalidArgument, status: 400 },
  ENAMETOOLONG: {
    reason: "file name too long: each name is at most 255 bytes",
    code: Code.InvalidArgument,
    status: 400,
  },
  ELOOP: {
    reason: "too many levels of symbolic links",
    code: Code.FailedPrecondition,
    status: 400,
  },
  EINVAL: { reason: "invalid argument", code: Code.InvalidArgument, status: 400 },
  EXDEV: { reason: "crosses a mount point", code: Code.InvalidArgument, status: 400 },
  EBUSY: {
    reason: "resource busy (a mount point or the root cannot be changed)",
    code: Code.FailedPrecondition,
    status: 409,
  },
  ETXTBSY: { reason: "text file busy", code: Code.FailedPrecondition, status: 409 },
  EMLINK: { reason: "too many links", code: Code.ResourceExhausted, status: 507 },
  ENOSPC: { reason: "no space left on device", code: Code.ResourceExhausted, status: 507 },
  EDQUOT: { reason: "disk quota exceeded", code: Code.ResourceExhausted, status: 507 },
  EFBIG: { reason: "file too large", code: Code.ResourceExhausted, status: 507 },
};

/** The report for `err`'s errno, or undefined when it is not a known filesystem error. */
export function errnoReport(err: unknown): ErrnoReport | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined ? undefined : TABLE[code];
}
