/**
 * The COPY archive upload: a PUT of the tar archive to the link that
 * `getTemplateFilesUploadLink` handed out (docs/control-api.md#build-flow, the SDK's
 * `putFileStream`). It goes through the same call path as every other method
 * (deadline, retries, the status table), on the client's injected fetch.
 *
 * @module
 */

import { invalidArgument } from "../../errors";
import { type CallContext, type CallOptions, invoke } from "./call";

/** The archive to upload. */
export interface UploadArchive {
  /** The exact size in bytes, sent as `Content-Length` (storage links refuse chunked bodies). */
  size: number;
  /**
   * Opens the archive for reading; called once per attempt, so a failed
   * attempt is sent again from the start.
   */
  open(): ReadableStream<Uint8Array>;
}

/** The upload method of the control client. */
export interface TemplateUploadMethods {
  /**
   * `PUT <url>`: uploads a COPY step's tar archive to the `url` of
   * `getTemplateFilesUploadLink`. The link carries its own authorisation, so
   * the API key is not sent (it may point at another host). An expired or
   * unknown link fails with `permission_denied` or `not_found`, never `internal`.
   * Retried like any idempotent call: the same archive to the same link.
   */
  uploadTemplateFiles(url: string, archive: UploadArchive, options?: CallOptions): Promise<void>;
}

/** Builds the {@link TemplateUploadMethods}. */
export function templateUploadMethods(ctx: CallContext): TemplateUploadMethods {
  return {
    async uploadTemplateFiles(url, archive, options) {
      const operation = "templates.uploadFiles";
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw invalidArgument(operation, "url", url, "an absolute http(s) URL");
      }
      if (target.protocol !== "http:" && target.protocol !== "https:")
        throw invalidArgument(operation, "url", url, "an absolute http(s) URL");
      if (!Number.isSafeInteger(archive.size) || archive.size < 0)
        throw invalidArgument(operation, "archive.size", archive.size, "a byte count >= 0");
      // The link's path or query is its credential: the error names the host only.
      const resourceId = `upload link on ${target.origin}`;
      const spec = {
        operation,
        resourceId,
        success: [200, 201, 204],
        schema: undefined,
        hints: {
          permission_denied:
            "the link expired or was used already; ask for a new one with getTemplateFilesUploadLink",
        },
      } as const;
      await invoke(ctx, spec, options, async (init) => {
        const response = await ctx.fetch(target, {
          method: "PUT",
          body: archive.open(),
          headers: {
            ...init.headers,
            "Content-Length": String(archive.size),
            "Content-Type": "application/gzip",
          },
          signal: init.signal,
          duplex: "half",
        });
        if (response.ok) {
          await response.body?.cancel();
          return { response };
        }
        return { response, error: await response.text().catch(() => "") };
      });
    },
  };
}
