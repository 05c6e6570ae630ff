/**
 * The read side of file transfer over envd's `/files` route: a download
 * streamed to disk (never buffering the whole file) and small reads into
 * memory. Reference: docs/envd.md#http-routes.
 *
 * Its own file because reading is a GET that is retried when transient and
 * needs no upload plumbing (Node stream bodies, mode changes, byte ranges),
 * which is `files-transfer.ts`. `FilesTransferApi` extends
 * {@link FilesReadApi}, and `createFilesTransferApi` takes these calls from
 * {@link createFilesReadApi}.
 *
 * @module
 */
import * as fs from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { invalidArgument, SandboxIacError } from "../../errors";
import { ENVD_ROUTES } from "../../wire/envd";
import { GZIP, HTTP_HEADERS, OPS } from "./constants";
import { effectiveUser, type SandboxContext } from "./context";
import { filesQuery, STREAM_CHUNK_BYTES } from "./files-route";
import type { TransferOptions } from "./transfer-options";
import { httpRequest } from "./http";
import { retryIdempotent } from "./idempotent";
import { checkPath, checkTimeoutMs, checkUser } from "./validate";

/** Options of {@link FilesReadApi.downloadFile}. */
export interface DownloadFileOptions extends TransferOptions {
  /** Ask for `Content-Encoding: gzip`; the body is decompressed while written. @default false */
  gzip?: boolean;
}

/** The read calls of the transfer part of the sandbox client. */
export interface FilesReadApi {
  /** Streams `remotePath` into `localPath` (created or truncated). */
  downloadFile(remotePath: string, localPath: string, options?: DownloadFileOptions): Promise<void>;
  /** Reads a small file as UTF-8 text. Retried when transient. */
  readText(remotePath: string, options?: TransferOptions): Promise<string>;
  /** Reads a small file as bytes. Retried when transient. */
  readBytes(remotePath: string, options?: TransferOptions): Promise<Uint8Array>;
}

/** Builds the read calls of the transfer part over a shared context. */
export function createFilesReadApi(ctx: SandboxContext): FilesReadApi {
  async function get(
    operation: string,
    remotePath: string,
    options: TransferOptions & { gzip?: boolean },
    defaultTimeoutMs: number,
  ) {
    const user = effectiveUser(ctx, checkUser(operation, options.user));
    return httpRequest(ctx, {
      method: "GET",
      route: ENVD_ROUTES.files,
      query: filesQuery(remotePath, user),
      // fetch decodes gzip itself (Fetch standard); "identity" stops undici from asking for it unasked.
      headers: { [HTTP_HEADERS.acceptEncoding]: options.gzip ? GZIP : "identity" },
      signal: options.signal,
      timeoutMs: checkTimeoutMs(operation, options.timeoutMs) ?? defaultTimeoutMs,
      scope: { operation, sandboxID: ctx.sandboxID, resourceId: remotePath },
    });
  }

  async function readBytes(remotePath: string, options: TransferOptions = {}): Promise<Uint8Array> {
    checkPath(OPS.filesRead, "path", remotePath);
    return retryIdempotent(async () => {
      const res = await get(OPS.filesRead, remotePath, options, ctx.timeoutMs);
      return new Uint8Array(await res.arrayBuffer());
    }, options.signal);
  }

  return {
    async downloadFile(remotePath, localPath, options = {}) {
      const op = OPS.filesDownload;
      checkPath(op, "remotePath", remotePath);
      if (typeof localPath !== "string" || localPath.length === 0) {
        throw invalidArgument(op, "localPath", localPath, "a non-empty local path");
      }
      const res = await get(op, remotePath, options, 0);
      if (!res.body) {
        await fs.promises.writeFile(localPath, new Uint8Array());
        return;
      }
      const body = Readable.fromWeb(res.body, { highWaterMark: STREAM_CHUNK_BYTES });
      // A gzip body arrives decoded: fetch undoes Content-Encoding itself (Fetch standard),
      // and decoding again would corrupt files whose content is gzip (.tar.gz).
      try {
        await pipeline(
          body,
          fs.createWriteStream(localPath, { highWaterMark: STREAM_CHUNK_BYTES }),
          {
            signal: options.signal,
          },
        );
      } catch (err) {
        throw new SandboxIacError(
          options.signal?.aborted ? "canceled" : "unavailable",
          `download of ${JSON.stringify(remotePath)} to ${JSON.stringify(localPath)} broke off in sandbox ${ctx.sandboxID}: ${SandboxIacError.from(err, { operation: op }).reason}`,
          {
            operation: op,
            resourceId: remotePath,
            cause: err,
          },
        );
      }
    },

    readBytes,

    async readText(remotePath, options = {}) {
      return new TextDecoder("utf-8").decode(await readBytes(remotePath, options));
    },
  };
}
