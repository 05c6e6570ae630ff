/**
 * Uploads a spooled COPY archive to the URL the service handed out, streamed
 * from disk with an exact `Content-Length` (the SDK's `putFileStream`).
 *
 * @module
 */
import { createReadStream } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import { pipeline } from "node:stream/promises";
import { SandboxIacError, redact } from "../../errors";
import type { SpooledArchive } from "./template.files";

/** Ends after this long without completing; the SDK allows one hour. */
const UPLOAD_TIMEOUT_MS = 60 * 60 * 1000;

/** PUTs `archive` to `url`; fails with `unavailable` on a refused connection and `internal` on a non-2xx answer. */
export async function putArchive(
  url: string,
  archive: SpooledArchive,
  signal?: AbortSignal,
): Promise<void> {
  const target = new URL(url);
  const request = (target.protocol === "https:" ? https : http).request;
  const operation = "templates.uploadFiles";
  const shownUrl = redact(`${target.origin}${target.pathname}`);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(target, {
      method: "PUT",
      headers: { "Content-Length": String(archive.size), "Content-Type": "application/gzip" },
      timeout: UPLOAD_TIMEOUT_MS,
      signal,
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${UPLOAD_TIMEOUT_MS} ms`)));
    req.on("error", reject);
    pipeline(createReadStream(archive.path), req).catch(reject);
  }).catch((err: unknown) => {
    throw new SandboxIacError(
      "unavailable",
      `could not upload the COPY archive to ${shownUrl}: ${String(err)}`,
      {
        operation,
        cause: err,
      },
    );
  });
  if (status < 200 || status >= 300) {
    throw new SandboxIacError(
      "internal",
      `the service answered HTTP ${status} to the COPY archive upload at ${shownUrl}`,
      {
        operation,
        status,
      },
    );
  }
}
