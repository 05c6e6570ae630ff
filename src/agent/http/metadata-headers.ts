/**
 * `X-Metadata-<key>` upload headers (docs/envd.md#files-and-compose): keys are
 * lower-cased printable ASCII, at most 246 bytes each and 4096 in total.
 *
 * @module
 */
import type { IncomingHttpHeaders } from "node:http";
import { ENVD_HEADERS } from "../../wire/envd";
import { HttpError } from "./respond";

const MAX_KEY_BYTES = 246;
const MAX_TOTAL_BYTES = 4096;

/** The metadata carried by `headers`; 400 when a key or the total is too large. */
export function metadataFromHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const prefix = ENVD_HEADERS.metadataPrefix.toLowerCase();
  const meta: Record<string, string> = {};
  let total = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(prefix) || value === undefined) continue;
    const key = name.slice(prefix.length).toLowerCase();
    const v = Array.isArray(value) ? value.join(",") : value;
    if (key === "" || !/^[\x21-\x7e]+$/.test(key)) {
      throw new HttpError(400, `metadata key '${key}' must be non-empty printable ASCII`);
    }
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
      throw new HttpError(
        400,
        `metadata key '${key.slice(0, 32)}...' exceeds ${MAX_KEY_BYTES} bytes`,
      );
    }
    total += Buffer.byteLength(key) + Buffer.byteLength(v);
    meta[key] = v;
  }
  if (total > MAX_TOTAL_BYTES)
    throw new HttpError(400, `metadata exceeds ${MAX_TOTAL_BYTES} bytes in total`);
  return meta;
}
