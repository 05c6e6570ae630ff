/**
 * `X-Metadata-<key>` upload headers (docs/envd.md#files-and-compose): keys are
 * lower-cased printable ASCII, at most 246 bytes each and 4096 in total;
 * values are UTF-8 bytes, stored as sent (as envd stores them).
 *
 * @module
 */
import type { IncomingHttpHeaders } from "node:http";
import { ENVD_HEADERS } from "../../wire/envd";
import { HttpError } from "./respond";

const MAX_KEY_BYTES = 246;
const MAX_TOTAL_BYTES = 4096;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as the text its bytes spell in UTF-8. Node's parser hands
 * header values over as Latin-1 (one char per byte), so "héllo" sent as UTF-8
 * arrives as "hÃ©llo"; its bytes are recovered and decoded. Bytes that are
 * not UTF-8 are refused: they could not be read back as metadata text.
 */
function utf8Value(key: string, latin1: string): string {
  try {
    return UTF8.decode(Buffer.from(latin1, "latin1"));
  } catch {
    throw new HttpError(
      400,
      `metadata value of '${key}' is not UTF-8: send the value's UTF-8 bytes (or printable ASCII)`,
    );
  }
}

/** The metadata carried by `headers`; 400 when a key or the total is too large. */
export function metadataFromHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const prefix = ENVD_HEADERS.metadataPrefix.toLowerCase();
  const meta: Record<string, string> = {};
  let total = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(prefix) || value === undefined) continue;
    const key = name.slice(prefix.length).toLowerCase();
    if (key === "" || !/^[\x21-\x7e]+$/.test(key)) {
      throw new HttpError(400, `metadata key '${key}' must be non-empty printable ASCII`);
    }
    const v = utf8Value(key, Array.isArray(value) ? value.join(",") : value);
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
