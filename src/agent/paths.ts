/**
 * The one path rule of envd (docs/envd.md#path-rule): empty means the
 * default workdir, `~` means HOME, relative paths are joined to HOME.
 *
 * @module
 */
import * as path from "node:path";
import type { SandboxUser } from "./users";

/** Why a path could not be resolved; the message is envd's. */
export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PathError";
  }
}

/** Linux's PATH_MAX: no system call takes a longer path. */
const MAX_PATH_BYTES = 4096;

/**
 * Resolves `p` for `user`.
 *
 * @throws PathError for a path no system call can take (a NUL byte, longer
 *   than {@link MAX_PATH_BYTES}), so callers answer 400 rather than failing later.
 *
 * @param defaultWorkdir what an empty path means; when absent, the user's HOME.
 */
export function resolvePath(
  p: string,
  user: SandboxUser,
  defaultWorkdir: string | undefined,
): string {
  if (p.includes("\0")) {
    throw new PathError(
      `path '${p.replace(/\0/g, "\\0")}' contains a NUL byte, which no file name can hold: remove it`,
    );
  }
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) {
    throw new PathError(
      `path '${p.slice(0, 64)}...' is ${Buffer.byteLength(p)} bytes long; at most ${MAX_PATH_BYTES} are allowed`,
    );
  }
  if (p === "") return path.resolve(defaultWorkdir ?? user.home);
  if (p === "~") return path.resolve(user.home);
  if (p.startsWith("~/")) return path.resolve(user.home, p.slice(2));
  if (p.startsWith("~")) {
    throw new PathError(
      `path '${p}' uses another user's home, which is not supported: use an absolute path`,
    );
  }
  if (path.isAbsolute(p)) return path.resolve(p);
  return path.resolve(user.home, p);
}
