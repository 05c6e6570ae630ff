/**
 * File transfer over envd's `/files` route: streamed uploads from disk and
 * downloads to disk (never buffering the whole file), plus small reads and
 * writes in memory. Reference: docs/envd.md#http-routes and docs/envd.md#files-and-compose.
 *
 * This file holds the transfer part and its uploads; downloads and reads are
 * `files-read.ts`, what both directions share (the route's query, the
 * stream chunk size) `files-route.ts`.
 *
 * @module
 */
import * as fs from "node:fs";
import { Readable } from "node:stream";
import * as zlib from "node:zlib";
import { invalidArgument, SandboxIacError } from "../../errors";
import { CONTENT_TYPES, ENVD_ROUTES } from "../../wire/envd";
import { GZIP, HTTP_HEADERS, OPS } from "./constants";
import { effectiveUser, type SandboxContext } from "./context";
import { createFilesReadApi, type FilesReadApi } from "./files-read";
import { filesQuery, STREAM_CHUNK_BYTES } from "./files-route";
import { uploadFilesBatch, type UploadEntry } from "./files-upload-batch";
import type { TransferOptions, WrittenFile } from "./transfer-options";
import { httpRequest, readJson, type HttpTarget } from "./http";
import { checkPath, checkTimeoutMs, checkUser } from "./validate";

/** Options of {@link FilesTransferApi.uploadFile}. */
export interface UploadFileOptions extends TransferOptions {
  /** Compress on the fly (`Content-Encoding: gzip`). @default false */
  gzip?: boolean;
  /** Permission bits to set after the upload, e.g. 0o755. @default unchanged (new files get envd's default, 0644) */
  mode?: number | undefined;
  /**
   * Upload only this byte range of the local file, inclusive at both ends
   * (how large files go up in parallel parts, joined later with compose).
   * @default the whole file
   */
  range?: { start: number; end: number } | undefined;
}

/** The transfer part of the sandbox client. */
export interface FilesTransferApi extends FilesReadApi {
  /** Streams a local file to `remotePath`, creating parents and overwriting. Never retried. */
  uploadFile(
    localPath: string,
    remotePath: string,
    options?: UploadFileOptions,
  ): Promise<WrittenFile>;
  /**
   * Sends many local files in ONE multipart `POST /files` (one part per file,
   * its filename the destination), streamed from disk. Parents are created and
   * existing files overwritten; the answer lists the written files in order.
   * An empty list sends nothing. Never retried. Keep batches modest (hundreds
   * of files, a few MiB): the sandbox writes a request's parts one by one, so
   * parallel batches are what spread the work.
   */
  uploadFiles(entries: readonly UploadEntry[], options?: TransferOptions): Promise<WrittenFile[]>;
  /** Writes small in-memory data to `remotePath`. Never retried. */
  uploadBytes(
    remotePath: string,
    data: Uint8Array | string,
    options?: TransferOptions,
  ): Promise<WrittenFile>;
}

/** Changes the mode of an uploaded file; provided by the process part. */
export type Chmod = (remotePath: string, mode: number, options: TransferOptions) => Promise<void>;

async function checkLocalFile(operation: string, localPath: unknown): Promise<string> {
  if (typeof localPath !== "string" || localPath.length === 0) {
    throw invalidArgument(operation, "localPath", localPath, "a non-empty local path");
  }
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(localPath);
  } catch (err) {
    throw invalidArgument(
      operation,
      "localPath",
      localPath,
      "a readable local file",
      SandboxIacError.from(err, { operation: operation }).reason,
    );
  }
  if (!stat.isFile())
    throw invalidArgument(
      operation,
      "localPath",
      localPath,
      "a regular file",
      "upload directories file by file",
    );
  return localPath;
}

/** Builds the transfer part over a shared context. */
export function createFilesTransferApi(ctx: SandboxContext, chmod: Chmod): FilesTransferApi {
  /**
   * Where a request goes: a Node stream body through `ctx.streamPost` (the
   * request's own body is left unset), anything else through the client's fetch.
   */
  function nodeStreamTarget(body: unknown): HttpTarget {
    if (!(body instanceof Readable)) return ctx;
    const streamPost = ctx.streamPost;
    if (!streamPost)
      throw new SandboxIacError("internal", "a Node stream body needs the client's streamPost", {
        operation: OPS.filesUpload,
      });
    // httpRequest calls its fetch with the URL as a string.
    const send = (url: string, init?: RequestInit) =>
      streamPost(url, {
        headers: init?.headers as Record<string, string>,
        body,
        signal: init?.signal ?? undefined,
      });
    return { ...ctx, fetch: send as unknown as typeof fetch };
  }

  async function post(
    operation: string,
    remotePath: string,
    body: NonNullable<RequestInit["body"]> | Readable,
    options: TransferOptions & { gzip?: boolean },
    defaultTimeoutMs: number,
  ) {
    const user = effectiveUser(ctx, checkUser(operation, options.user));
    const scope = { operation, sandboxID: ctx.sandboxID, resourceId: remotePath };
    const res = await httpRequest(nodeStreamTarget(body), {
      method: "POST",
      route: ENVD_ROUTES.files,
      query: filesQuery(remotePath, user),
      headers: {
        [HTTP_HEADERS.contentType]: CONTENT_TYPES.octetStream,
        ...(options.gzip ? { [HTTP_HEADERS.contentEncoding]: GZIP } : {}),
      },
      body: body instanceof Readable ? undefined : body,
      signal: options.signal,
      timeoutMs: checkTimeoutMs(operation, options.timeoutMs) ?? defaultTimeoutMs,
      scope,
    });
    const written = await readJson<WrittenFile[]>(res, scope);
    const first = Array.isArray(written) ? written[0] : undefined;
    if (!first) {
      throw new SandboxIacError(
        "contract_violation",
        `the sandbox ${ctx.sandboxID} answered the upload without the written file`,
        { operation, resourceId: remotePath },
      );
    }
    return { path: first.path, name: first.name, type: first.type };
  }

  return {
    async uploadFile(localPath, remotePath, options = {}) {
      const op = OPS.filesUpload;
      checkPath(op, "remotePath", remotePath);
      await checkLocalFile(op, localPath);
      if (
        options.mode !== undefined &&
        (!Number.isInteger(options.mode) || options.mode < 0 || options.mode > 0o7777)
      ) {
        throw invalidArgument(
          op,
          "mode",
          options.mode,
          "permission bits from 0 to 0o7777",
          "write it in octal, e.g. 0o755",
        );
      }
      const range = options.range;
      if (
        range !== undefined &&
        !(
          Number.isSafeInteger(range.start) &&
          Number.isSafeInteger(range.end) &&
          range.start >= 0 &&
          range.end >= range.start
        )
      ) {
        throw invalidArgument(
          op,
          "range",
          range,
          "{ start, end } byte offsets with 0 <= start <= end",
          "end is inclusive: the first 1 MiB is { start: 0, end: 1048575 }",
        );
      }
      const source = fs.createReadStream(localPath, {
        highWaterMark: STREAM_CHUNK_BYTES,
        ...(range ? { start: range.start, end: range.end } : {}),
      });
      const stream: Readable = options.gzip ? source.pipe(zlib.createGzip()) : source;
      // A failing read must fail the request, not hang it; pipe() does not forward errors.
      if (options.gzip) source.on("error", (err) => stream.destroy(err));
      // Piped straight into node:http unless a fetch was injected (node-upload.ts).
      const body = ctx.streamPost
        ? stream
        : (Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>);
      try {
        const written = await post(op, remotePath, body, options, 0);
        if (options.mode !== undefined) await chmod(written.path, options.mode, options);
        return written;
      } finally {
        source.destroy();
      }
    },

    uploadFiles(entries, options = {}) {
      return uploadFilesBatch(ctx, entries, options);
    },

    async uploadBytes(remotePath, data, options = {}) {
      checkPath(OPS.filesUpload, "remotePath", remotePath);
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      return post(OPS.filesUpload, remotePath, bytes, options, ctx.timeoutMs);
    },

    // Downloads and reads (files-read.ts).
    ...createFilesReadApi(ctx),
  };
}
