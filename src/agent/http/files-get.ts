/**
 * `GET /files`: the raw bytes of a file, streamed from disk, gzipped on
 * request, with single-range support (wire-protocol.md 8.1).
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { CONTENT_TYPES, FILES_QUERY } from "../../wire/envd";
import { HttpError } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";

/**
 * Read size of file bodies: 1 MiB reads instead of the default 64 KiB cut the
 * syscalls and stream callbacks per byte sixteenfold on large downloads.
 */
const READ_CHUNK_BYTES = 1024 * 1024;

function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [name, ...params] = part.trim().split(";");
    const q = params.find((p) => p.trim().startsWith("q="));
    return name?.trim().toLowerCase() === "gzip" && (!q || Number(q.trim().slice(2)) > 0);
  });
}

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
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(abs);
  } catch {
    throw new HttpError(404, `path '${abs}' does not exist`);
  }
  if (st.isDirectory()) throw new HttpError(400, `path '${abs}' is a directory`);
  const handle = await fs.promises.open(abs, "r").catch((err: NodeJS.ErrnoException) => {
    throw new HttpError(
      err.code === "EACCES" ? 401 : 500,
      `cannot open '${abs}': ${err.code ?? err.message}`,
    );
  });
  const name = path.basename(abs);
  const headers: Record<string, string | number> = {
    "Content-Type": CONTENT_TYPES.octetStream,
    "Content-Disposition": contentDisposition(name),
    Vary: "Accept-Encoding",
    "Last-Modified": st.mtime.toUTCString(),
  };
  if (acceptsGzip(req.headers["accept-encoding"])) {
    res.writeHead(200, { ...headers, "Content-Encoding": "gzip" });
    await pipeline(handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }), createGzip(), res);
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
    await pipeline(
      handle.createReadStream({
        start: range.start,
        end: range.end,
        highWaterMark: READ_CHUNK_BYTES,
      }),
      res,
    );
    return;
  }
  res.writeHead(200, { ...headers, "Accept-Ranges": "bytes", "Content-Length": st.size });
  await pipeline(handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES }), res);
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
