/**
 * `POST /files`: multipart (field `file`, possibly repeated) or octet-stream
 * uploads, streamed to disk without buffering (docs/envd.md#files-and-compose). Each
 * file is written to a temporary file and renamed into place, so a crash
 * mid-upload leaves the previous version intact.
 *
 * @module
 */
import type busboy from "busboy";
import * as path from "node:path";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { CONTENT_TYPES, FILES_QUERY } from "../../wire/envd";
import { replaceFile } from "../filesystem/replace-file";
import type { SandboxUser } from "../users";
import { requestBody } from "./early-answer";
import { metadataFromHeaders } from "./metadata-headers";
import { httpFsError } from "./fs-error";
import { HttpError, sendJson } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";
import { SandboxIacError } from "../../errors";

/** `busboy`, loaded on the first multipart upload rather than at every agent start. */
function busboyModule(): typeof busboy {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("busboy") as typeof busboy;
}

/**
 * Largest multipart part without a filename: busboy holds such a part in
 * memory as a form field, so it is bounded (filename parts stream to disk).
 */
const MAX_FIELD_PART_BYTES = 16 * 1024 * 1024;

/** One written file as the response lists it (envd's EntryInfo subset). */
interface WrittenFile {
  path: string;
  name: string;
  type: "file";
  /** Present when the upload carried `X-Metadata-*` headers, as envd answers. */
  metadata?: Record<string, string>;
}

async function writeTo(
  dest: string,
  body: Readable,
  user: SandboxUser,
  meta: Record<string, string>,
): Promise<WrittenFile> {
  try {
    await replaceFile({ dest, body, user, metadata: meta });
  } catch (err) {
    body.resume();
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (code.startsWith("Z_")) {
      throw new HttpError(
        400,
        `cannot write '${dest}': the body is not valid gzip (${code}): send gzip data or drop Content-Encoding`,
      );
    }
    // A missing directory cannot be the cause (parents are created), so
    // ENOENT here means the path itself is unusable: the caller's mistake.
    const failure = httpFsError(err, `cannot write '${dest}'`);
    throw failure.status === 404 ? new HttpError(400, failure.message) : failure;
  }
  const entry: WrittenFile = { path: dest, name: path.basename(dest), type: "file" };
  if (Object.keys(meta).length > 0) entry.metadata = meta;
  return entry;
}

async function multipart(
  ctx: RouteContext,
  user: SandboxUser,
  meta: Record<string, string>,
): Promise<WrittenFile[]> {
  const pathQuery = ctx.url.searchParams.get(FILES_QUERY.path);
  let bb: busboy.Busboy;
  try {
    // Filenames are the destination paths; the SDKs send them in UTF-8, not latin1.
    bb = busboyModule()({
      headers: ctx.req.headers,
      preservePath: true,
      defParamCharset: "utf8",
      limits: { fieldSize: MAX_FIELD_PART_BYTES },
    });
  } catch (err) {
    throw new HttpError(
      400,
      `invalid multipart request: ${SandboxIacError.from(err, { operation: "files.upload" }).reason}: send multipart/form-data with a boundary`,
    );
  }
  const seen = new Set<string>();
  // Parts arrive one at a time (busboy waits for each part's stream), so
  // these writes never run more than one at once.
  const writes: Promise<WrittenFile>[] = [];
  let failure: HttpError | undefined;
  const accept = (raw: string | undefined, body: Readable): void => {
    let dest: string;
    try {
      if (pathQuery === null && !raw) {
        throw new HttpError(
          400,
          "a multipart part has neither a filename nor a path query: name the destination in one of them",
        );
      }
      dest = httpPath(ctx, user, pathQuery ?? raw ?? "");
    } catch (err) {
      failure ??= err as HttpError;
      body.resume();
      return;
    }
    if (seen.has(dest)) {
      failure ??= new HttpError(
        400,
        `two parts resolve to the same path '${dest}': send each path once`,
      );
      body.resume();
      return;
    }
    seen.add(dest);
    const write = writeTo(dest, body, user, meta);
    write.catch(() => undefined);
    writes.push(write);
  };
  bb.on("file", (field, stream, info) => {
    if (field !== "file" || failure) {
      stream.resume();
      return;
    }
    accept(info.filename, stream);
  });
  // A part without a filename (`form.append("file", "text")`) is a form
  // field to busboy; envd writes it to the path query all the same.
  bb.on("field", (field, value, info) => {
    if (field !== "file" || failure) return;
    if (info.valueTruncated) {
      failure = new HttpError(
        413,
        `a multipart part without a filename exceeds ${MAX_FIELD_PART_BYTES} bytes: give it a filename to stream it`,
      );
      return;
    }
    accept(undefined, Readable.from([Buffer.from(value, "utf8")]));
  });
  await new Promise<void>((resolve, reject) => {
    bb.on("close", resolve);
    bb.on("error", (err: Error) =>
      reject(new HttpError(400, `invalid multipart body: ${err.message}`)),
    );
    ctx.req.on("error", reject);
    ctx.req.pipe(bb);
  });
  const results: WrittenFile[] = [];
  for (const w of writes) results.push(await w);
  if (failure) throw failure;
  if (results.length === 0) {
    throw new HttpError(
      400,
      "the multipart body has no part named 'file': nothing was written; send each file in a part named 'file'",
    );
  }
  return results;
}

/** Serves `POST /files`. */
export async function postFiles(ctx: RouteContext): Promise<void> {
  const user = httpUser(ctx);
  const meta = metadataFromHeaders(ctx.req.headers);
  const type = (ctx.req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  let written: WrittenFile[];
  if (type === CONTENT_TYPES.multipart) {
    written = await multipart(ctx, user, meta);
  } else if (type === CONTENT_TYPES.octetStream) {
    const p = ctx.url.searchParams.get(FILES_QUERY.path);
    if (!p)
      throw new HttpError(400, "the path query parameter is required for octet-stream uploads");
    const encoding = (ctx.req.headers["content-encoding"] ?? "").trim().toLowerCase();
    if (encoding !== "" && encoding !== "gzip" && encoding !== "identity") {
      throw new HttpError(400, `unsupported Content-Encoding '${encoding}': use gzip or none`);
    }
    const dest = httpPath(ctx, user, p);
    // Piped, never the request itself: a failed write destroys its source (early-answer.ts).
    const body: Readable =
      encoding === "gzip" ? ctx.req.pipe(createGunzip()) : requestBody(ctx.req);
    written = [await writeTo(dest, body, user, meta)];
  } else {
    throw new HttpError(
      400,
      `unsupported Content-Type '${type}': use multipart/form-data or application/octet-stream`,
    );
  }
  sendJson(ctx.res, 200, written);
}
