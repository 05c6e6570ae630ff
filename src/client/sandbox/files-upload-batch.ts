/**
 * Many files in one multipart `POST /files` (field `file` repeated, each
 * part's filename its destination; docs/envd.md#files-and-compose), streamed from disk.
 *
 * @module
 */
import * as fs from "node:fs";
import { invalidArgument, SandboxIacError } from "../../errors";
import { ENVD_ROUTES, FILES_QUERY } from "../../wire/envd";
import { OPS } from "./constants";
import { effectiveUser, type SandboxContext } from "./context";
import type { TransferOptions, WrittenFile } from "./transfer-options";
import { httpRequest, readJson } from "./http";
import { checkPath, checkTimeoutMs, checkUser } from "./validate";

/** One file of {@link FilesTransferApi.uploadFiles}. */
export interface UploadEntry {
  /** Local regular file to send; read while the request goes out, never held in memory. */
  localPath: string;
  /**
   * Destination in the sandbox, absolute or relative to the user's home. It
   * travels as the multipart filename, so it must pass {@link isMultipartSafePath}.
   */
  remotePath: string;
}

/**
 * True when `remotePath` can travel as a multipart filename unchanged:
 * printable ASCII without a double quote or a backslash. fetch's form encoder escapes `"` and
 * line breaks, a backslash reads as an escape on the receiving side, and
 * non-ASCII bytes are not decoded as UTF-8 by every receiver; such paths go
 * up with {@link FilesTransferApi.uploadFile} instead.
 */
export function isMultipartSafePath(remotePath: string): boolean {
  return /^[\x20-\x7e]+$/.test(remotePath) && !/["\\]/.test(remotePath);
}

/** The multipart body of an upload of `entries`: lazy file Blobs, nothing read yet. */
async function multipartForm(
  operation: string,
  entries: readonly UploadEntry[],
): Promise<FormData> {
  const form = new FormData();
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const field = `entries[${i}]`;
    if (typeof entry !== "object" || entry === null)
      throw invalidArgument(operation, field, entry, "{ localPath, remotePath }");
    checkPath(operation, `${field}.remotePath`, entry.remotePath);
    if (!isMultipartSafePath(entry.remotePath)) {
      throw invalidArgument(
        operation,
        `${field}.remotePath`,
        entry.remotePath,
        'printable ASCII without " or \\',
        "upload this file with uploadFile()",
      );
    }
    if (seen.has(entry.remotePath)) {
      throw invalidArgument(
        operation,
        `${field}.remotePath`,
        entry.remotePath,
        "a path not already in the batch",
        "send each destination once",
      );
    }
    seen.add(entry.remotePath);
    if (typeof entry.localPath !== "string" || entry.localPath.length === 0) {
      throw invalidArgument(
        operation,
        `${field}.localPath`,
        entry.localPath,
        "a non-empty local path",
      );
    }
    let blob: Blob;
    try {
      blob = await fs.openAsBlob(entry.localPath);
    } catch (err) {
      throw invalidArgument(
        operation,
        `${field}.localPath`,
        entry.localPath,
        "a readable local file",
        SandboxIacError.from(err, { operation: operation }).reason,
      );
    }
    form.append("file", blob, entry.remotePath);
  }
  return form;
}

/** The first entry that is not (or no longer) a readable regular file, as an error. */
async function unreadableEntry(
  operation: string,
  entries: readonly UploadEntry[],
): Promise<SandboxIacError | undefined> {
  for (const [i, entry] of entries.entries()) {
    const field = `entries[${i}].localPath`;
    try {
      const stat = await fs.promises.stat(entry.localPath);
      if (!stat.isFile())
        return invalidArgument(
          operation,
          field,
          entry.localPath,
          "a regular file",
          "upload directories file by file",
        );
      await fs.promises.access(entry.localPath, fs.constants.R_OK);
    } catch (err) {
      return invalidArgument(
        operation,
        field,
        entry.localPath,
        "a readable local file",
        SandboxIacError.from(err, { operation: operation }).reason,
      );
    }
  }
  return undefined;
}

/** Uploads `entries` in one multipart request; the written files in order. */
export async function uploadFilesBatch(
  ctx: SandboxContext,
  entries: readonly UploadEntry[],
  options: TransferOptions,
): Promise<WrittenFile[]> {
  const op = OPS.filesUpload;
  if (!Array.isArray(entries))
    throw invalidArgument(op, "entries", entries, "an array of { localPath, remotePath }");
  if (entries.length === 0) return [];
  const form = await multipartForm(op, entries);
  const user = effectiveUser(ctx, checkUser(op, options.user));
  const scope = { operation: op, sandboxID: ctx.sandboxID, resourceId: entries[0]!.remotePath };
  let res: Response;
  try {
    // No path query: each part's filename is its destination (docs/envd.md#files-and-compose).
    // fetch sets the multipart Content-Type with its boundary itself.
    res = await httpRequest(ctx, {
      method: "POST",
      route: ENVD_ROUTES.files,
      query: { [FILES_QUERY.username]: user },
      body: form,
      signal: options.signal,
      timeoutMs: checkTimeoutMs(op, options.timeoutMs) ?? 0,
      scope,
    });
  } catch (err) {
    // A file that vanished or became a directory after listing fails the body
    // stream anonymously; look for it only now, so success costs no extra stat.
    throw (await unreadableEntry(op, entries)) ?? err;
  }
  const written = await readJson<WrittenFile[]>(res, scope);
  if (!Array.isArray(written) || written.length !== entries.length) {
    throw new SandboxIacError(
      "contract_violation",
      `the sandbox ${ctx.sandboxID} answered an upload of ${entries.length} files with ${Array.isArray(written) ? written.length : "no"} written entries`,
      { operation: op, resourceId: scope.resourceId },
    );
  }
  return written.map((w) => ({ path: w.path, name: w.name, type: w.type }));
}
