/**
 * The shapes every file transfer shares: the options each call takes and
 * what envd reports for a written file (docs/envd.md#http-routes).
 *
 * @module
 */

/** What envd reports for each written file. */
export interface WrittenFile {
  /** Absolute path inside the sandbox. */
  path: string;
  /** Base name. */
  name: string;
  /** Always `file`. */
  type: string;
}

/** Options shared by transfers. */
export interface TransferOptions {
  /** Act as this user (owner of written files, base of relative paths). @default the client's user, else the sandbox's default user */
  user?: string | undefined;
  /** Aborts the transfer. @default none */
  signal?: AbortSignal | undefined;
  /** Deadline for the whole transfer in milliseconds; 0 means none. @default 0 for uploadFile/downloadFile, the client's timeoutMs otherwise */
  timeoutMs?: number | undefined;
}
