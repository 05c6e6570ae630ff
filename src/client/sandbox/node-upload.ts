/**
 * Streamed uploads from disk over `node:http(s)`, for clients on the default
 * fetch. A file read by `fs.createReadStream` is piped straight into the
 * request: no web-stream bridge (`Readable.toWeb` copies every chunk into a
 * new `Uint8Array`) and no fetch machinery per chunk. Uploading 256 MiB, the
 * client's CPU measured about 0.6-0.8 s this way against 1.1-1.4 s through
 * the global fetch (bench/provisioner.js's big-file row, loaded machine).
 *
 * It answers as fetch does (a web `Response`, rejections named `AbortError`
 * or `TimeoutError` from the signal), so error mapping stays in `http.ts`.
 *
 * @internal
 * @module
 */
import * as http from "node:http";
import * as https from "node:https";
import type { Readable } from "node:stream";

/** A POST of a Node stream that answers like fetch. @internal */
export type StreamPost = (
  url: string,
  init: { headers: Record<string, string>; body: Readable; signal?: AbortSignal | undefined },
) => Promise<Response>;

/** Statuses whose answer has no body (a web `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** The headers of `res` as a web `Headers`. */
function webHeaders(res: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** `reason` as an Error (a signal's reason is a DOMException, which is one, unless set otherwise). */
function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

/**
 * POSTs `init.body` to `url` and resolves with the whole answer (uploads are
 * answered with a small JSON list). A failing body (the file's read) or a
 * broken connection rejects; the signal aborts the request with its reason.
 * @internal
 */
export const postNodeStream: StreamPost = (url, init) =>
  new Promise<Response>((resolve, reject) => {
    const { body, signal } = init;
    if (signal?.aborted) {
      body.destroy();
      reject(asError(signal.reason));
      return;
    }
    const target = new URL(url);
    const request = (target.protocol === "https:" ? https : http).request(target, {
      method: "POST",
      headers: init.headers,
    });
    const onAbort = () => request.destroy(asError(signal?.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    const fail = (err: Error) => {
      signal?.removeEventListener("abort", onAbort);
      body.destroy();
      reject(err);
    };
    request.on("error", fail);
    // pipe() does not forward a read error: it must fail the request, not hang it.
    body.on("error", (err) => request.destroy(err));
    request.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () => {
        signal?.removeEventListener("abort", onAbort);
        const status = res.statusCode ?? 502;
        try {
          resolve(
            new Response(NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks), {
              status,
              headers: webHeaders(res),
            }),
          );
        } catch (err) {
          // A status a web Response cannot hold (outside 200-599): a broken answer.
          reject(asError(err));
        }
      });
    });
    body.pipe(request);
  });
