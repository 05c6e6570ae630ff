/**
 * `POST /files`: multipart (field `file`, possibly repeated) or octet-stream
 * uploads, streamed to disk without buffering (wire-protocol.md 8.1).
 *
 * @module
 */
import busboy from "busboy";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { CONTENT_TYPES, FILES_QUERY } from "../../wire/envd";
import { makeDirsAs } from "../filesystem/ownership";
import type { SandboxUser } from "../users";
import { writeMetadata } from "../xattr";
import { metadataFromHeaders } from "./metadata-headers";
import { HttpError, sendJson, statusForErrno } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";

/**
 * Bytes a file write may queue: socket reads arrive in 64 KiB chunks, and a
 * deeper queue lets the write stream hand several to one `writev` call.
 */
const WRITE_QUEUE_BYTES = 1024 * 1024;

/** One written file as the response lists it. */
interface WrittenFile {
  path: string;
  name: string;
  type: "file";
}

async function writeTo(
  dest: string,
  body: Readable,
  user: SandboxUser,
  meta: Record<string, string>,
): Promise<WrittenFile> {
  // Each upload replaces the whole metadata set. A new file has none, so
  // writing an empty set would only cost a round trip to the xattr helper.
  let existed = true;
  try {
    await makeDirsAs(path.dirname(dest), user);
    existed = await fs.promises.lstat(dest).then(
      () => true,
      () => false,
    );
    await pipeline(
      body,
      fs.createWriteStream(dest, { flags: "w", highWaterMark: WRITE_QUEUE_BYTES }),
    );
    await fs.promises.chown(dest, user.uid, user.gid);
  } catch (err) {
    body.resume();
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new HttpError(
      statusForErrno(err) === 404 ? 400 : statusForErrno(err),
      `cannot write '${dest}': ${code}`,
    );
  }
  if (existed || Object.keys(meta).length > 0)
    await writeMetadata(dest, meta).catch(() => undefined);
  return { path: dest, name: path.basename(dest), type: "file" };
}

async function multipart(
  ctx: RouteContext,
  user: SandboxUser,
  meta: Record<string, string>,
): Promise<WrittenFile[]> {
  const pathQuery = ctx.url.searchParams.get(FILES_QUERY.path);
  // Filenames are the destination paths; the SDKs send them in UTF-8, not latin1.
  const bb = busboy({ headers: ctx.req.headers, preservePath: true, defParamCharset: "utf8" });
  const seen = new Set<string>();
  // Parts arrive one at a time (busboy waits for each part's stream), so
  // these writes never run more than one at once.
  const writes: Promise<WrittenFile>[] = [];
  let failure: HttpError | undefined;
  bb.on("file", (field, stream, info) => {
    if (field !== "file" || failure) {
      stream.resume();
      return;
    }
    let dest: string;
    try {
      dest = httpPath(ctx, user, pathQuery ?? info.filename ?? "");
    } catch (err) {
      failure = err as HttpError;
      stream.resume();
      return;
    }
    if (seen.has(dest)) {
      failure = new HttpError(
        400,
        `two parts resolve to the same path '${dest}': send each path once`,
      );
      stream.resume();
      return;
    }
    seen.add(dest);
    const write = writeTo(dest, stream, user, meta);
    write.catch(() => undefined);
    writes.push(write);
  });
  await new Promise<void>((resolve, reject) => {
    bb.on("close", resolve);
    bb.on("error", (err: Error) =>
      reject(new HttpError(400, `invalid multipart body: ${err.message}`)),
    );
    ctx.req.pipe(bb);
  });
  const results: WrittenFile[] = [];
  for (const w of writes) results.push(await w);
  if (failure) throw failure;
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
    const body: Readable = encoding === "gzip" ? ctx.req.pipe(createGunzip()) : ctx.req;
    written = [await writeTo(httpPath(ctx, user, p), body, user, meta)];
  } else {
    throw new HttpError(
      400,
      `unsupported Content-Type '${type}': use multipart/form-data or application/octet-stream`,
    );
  }
  sendJson(ctx.res, 200, written);
}
