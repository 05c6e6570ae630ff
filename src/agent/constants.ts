/**
 * Names and limits used only by the in-sandbox agent. Wire names shared with
 * the control service live in `src/wire/envd.ts`.
 *
 * @module
 */

/** Extended-attribute prefix under which envd stores file metadata. */
export const METADATA_XATTR_PREFIX = "user.e2b.";

/** Largest data event for pipe output (envd reads 32 KiB at a time). */
export const PIPE_CHUNK_BYTES = 32 * 1024;

/** Largest data event for PTY output. */
export const PTY_CHUNK_BYTES = 16 * 1024;

/** How long the end event of an exited process stays available to `Connect`. */
export const EXITED_RETENTION_MS = 30_000;

/** The PATH given to every process, before global and request variables. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The user envd acts as until `/init` names another. */
export const BOOT_DEFAULT_USER = "root";

/** Where the sandbox's user database lives. */
export const PASSWD_FILE = "/etc/passwd";
/** Where the sandbox's group database lives. */
export const GROUP_FILE = "/etc/group";

/** Wrapper every command runs through, so a missing binary still yields start/stderr/end(127). */
export const SHELL_WRAPPER = ["/bin/sh", "-c", 'exec "$@"', "--"] as const;

/** Prefix of the Connect routes, used to tell RPC from plain HTTP. */
export const RPC_PATH_PREFIXES = ["/process.Process/", "/filesystem.Filesystem/"] as const;

/** The 401 body of the access-token check (docs/envd.md#authentication-users-and-headers). */
export const UNAUTHORIZED_MESSAGE =
  "unauthorized access, please provide a valid access token or method signing if supported";
