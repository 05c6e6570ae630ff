/**
 * Which content coding `GET /files` answers with, from the request's
 * `Accept-Encoding` (RFC 9110 12.5.3).
 *
 * envd gzips whenever gzip is acceptable, so Node's fetch, which sends
 * `Accept-Encoding: gzip, deflate` on every request it is not told otherwise
 * about, gets every download compressed: the official SDK's default
 * `files.read` crawled at zlib's speed through incompressible bytes. Here gzip
 * is served when the caller asked for it *on purpose*: gzip is the only coding
 * it names (what the SDK sends for `gzip: true`, and what `curl
 * -H 'Accept-Encoding: gzip'` sends), or identity is refused. A header listing
 * several codings is a client saying what it could decode, not asking for
 * compression; on the service's loopback and veth links compressing never pays
 * (the raw bytes move faster than zlib makes them), so those get identity,
 * which RFC 9110 always allows unless refused.
 *
 * @module
 */

/** The coding to send, or `unacceptable` when identity is refused and gzip not allowed (406). */
export type DownloadEncoding = "gzip" | "identity" | "unacceptable";

interface Coding {
  name: string;
  q: number;
}

function parseCodings(header: string): Coding[] {
  return header
    .split(",")
    .map((part) => {
      const [name = "", ...params] = part.split(";");
      const qParam = params.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith("q="));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return { name: name.trim().toLowerCase(), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((c) => c.name !== "");
}

/**
 * Negotiates the coding of a download.
 *
 * @param header the request's `Accept-Encoding`; absent means identity.
 * @param partial true for Range or conditional requests, which are answered
 *   from the file's own bytes (as envd does), so only identity fits them.
 */
export function downloadEncoding(header: string | undefined, partial: boolean): DownloadEncoding {
  const codings = header === undefined ? [] : parseCodings(header);
  const find = (name: string) => codings.find((c) => c.name === name);
  const identity = find("identity");
  const wildcard = find("*");
  const identityRefused =
    identity !== undefined ? identity.q <= 0 : wildcard !== undefined && wildcard.q <= 0;
  const gzip = find("gzip");
  const gzipAllowed = gzip !== undefined ? gzip.q > 0 : wildcard !== undefined && wildcard.q > 0;
  if (identityRefused) return gzipAllowed && !partial ? "gzip" : "unacceptable";
  if (partial || gzip === undefined || gzip.q <= 0) return "identity";
  const others = codings.filter((c) => c.q > 0 && c.name !== "gzip" && c.name !== "identity");
  return others.length === 0 ? "gzip" : "identity";
}
