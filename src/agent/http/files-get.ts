/**
 * `GET /files`: the raw bytes of a file, streamed from disk, gzipped when the
 * caller asks for it (see download-encoding.ts), with single-range support
 * (docs/envd.md#files-and-compose).
 *
 * @module
 */
import * as fs from "node:fs";
import type { ServerResponse } from "node:http";
import * as path from "node:path";
import { finished, pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { CONTENT_TYPES, FILES_QUERY } from "../../wire/envd";
import { downloadEncoding } from "./download-encoding";
import { httpFsError } from "./fs-error";
import { HttpError } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";

/**
 * Read size of file bodies: 1 MiB reads instead of the default 64 KiB cut the
 * syscalls and stream callbacks per byte sixteenfold on large downloads.
 */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * Size of the gzip output chunks: zlib's default 16 KiB meant one write, one
 * chunked-encoding frame and one proxy hop per 16 KiB; 256 KiB lets zlib run
 * at its own speed. Nothing flushes before the end.
 */
const GZIP_CHUNK_BYTES = 256 * 1024;

function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const n = Math.min(Number(m[2]), size);
    return { start: size - n, end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return { start, end };
}

/** Serves `GET /files`. */
export async function getFile(ctx: RouteContext): Promise<void> {
  const { req, res } = ctx;
  const user = httpUser(ctx);
  const raw = ctx.url.searchParams.get(FILES_QUERY.path) ?? "";
  const abs = httpPath(ctx, user, raw);
  // The size comes from the open handle, never from a second lookup of the
  // path: a file replaced in between would otherwise get the old size and
  // the new bytes, a response promising more than it sends.
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
  // below as not a regular file); it changes nothing for regular files.
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;
  const handle = await fs.promises.open(abs, flags).catch((err: unknown) => {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT") throw new HttpError(404, `path '${abs}' does not exist`);
    throw httpFsError(err, `cannot open '${abs}'`);
  });
  let st: fs.Stats;
  try {
    st = await handle.stat();
    if (st.isDirectory()) throw new HttpError(400, `path '${abs}' is a directory`);
    if (!st.isFile()) {
      throw new HttpError(400, `path '${abs}' is not a regular file: only files can be downloaded`);
    }
  } catch (err) {
    await handle.close();
    throw httpFsError(err, `cannot read '${abs}'`);
  }
  const name = path.basename(abs);
  const headers: Record<string, string | number> = {
    "Content-Type": CONTENT_TYPES.octetStream,
    "Content-Disposition": contentDisposition(name),
    Vary: "Accept-Encoding",
    "Last-Modified": st.mtime.toUTCString(),
  };
  const encoding = downloadEncoding(
    req.headers["accept-encoding"],
    req.headers.range !== undefined,
  );
  if (encoding === "unacceptable") {
    await handle.close();
    throw new HttpError(
      406,
      `Accept-Encoding '${req.headers["accept-encoding"]}' refuses identity and allows no coding this server has for this request: allow gzip (not with Range) or identity`,
    );
  }
  if (encoding === "gzip") {
    res.writeHead(200, { ...headers, "Content-Encoding": "gzip" });
    await pipeline(
      handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }),
      createGzip({ chunkSize: GZIP_CHUNK_BYTES }),
      res,
    );
    return;
  }
  const range = parseRange(req.headers.range, st.size);
  if (range && (range.start > range.end || range.start >= st.size)) {
    await handle.close();
    res.writeHead(416, { "Content-Range": `bytes */${st.size}` });
    res.end();
    return;
  }
  if (range) {
    res.writeHead(206, {
      ...headers,
      "Accept-Ranges": "bytes",
      "Content-Range": `bytes ${range.start}-${range.end}/${st.size}`,
      "Content-Length": range.end - range.start + 1,
    });
    await sendExactly(handle, range.start, range.end - range.start + 1, res);
    return;
  }
  res.writeHead(200, { ...headers, "Accept-Ranges": "bytes", "Content-Length": st.size });
  await sendExactly(handle, 0, st.size, res);
}

/**
 * Streams bytes `start` .. `start + length - 1` of `handle`, never more; when
 * the file shrank meanwhile (truncated in place), the connection is closed so
 * the client sees a short body instead of waiting for bytes that never come.
 */
async function sendExactly(
  handle: fs.promises.FileHandle,
  start: number,
  length: number,
  res: ServerResponse,
): Promise<void> {
  if (length === 0) {
    await handle.close();
    res.end();
    return;
  }
  let sent = 0;
  const stream = handle.createReadStream({
    start,
    end: start + length - 1,
    highWaterMark: READ_CHUNK_BYTES,
  });
  stream.on("data", (chunk: string | Buffer) => {
    sent += chunk.length;
  });
  // A client that goes away must not leave the read (and the handle) pending.
  const onClose = () => stream.destroy();
  res.once("close", onClose);
  stream.pipe(res, { end: false });
  try {
    await finished(stream);
  } finally {
    res.off("close", onClose);
  }
  if (sent < length) res.destroy();
  else res.end();
}

/**
 * `inline; filename="..."`, plus RFC 6266 `filename*` for names that are not
 * printable ASCII (a raw UTF-8 header value is refused by Node and by clients).
 */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "\\$&");
  if (/^[\x20-\x7e]*$/.test(name)) return `inline; filename="${ascii}"`;
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
