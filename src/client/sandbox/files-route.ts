/**
 * What uploads and downloads over envd's `/files` route share: the query
 * that names a file and the user it is read or written as, and the chunk
 * size of the file streams sent and received. Its own file so that the
 * upload side (`files-transfer.ts`) and the read side (`files-read.ts`) take
 * them from one place without importing each other.
 *
 * @module
 */
import { FILES_QUERY } from "../../wire/envd";

/**
 * Chunk size of file streams. Node's 64 KiB default costs more than half the
 * throughput in per-chunk overhead (fetch body, web-stream bridging, writev).
 */
export const STREAM_CHUNK_BYTES = 1 << 20;

/** The query of a `/files` request for `path`, read or written as `user`. */
export function filesQuery(path: string, user: string | undefined) {
  return { [FILES_QUERY.path]: path, [FILES_QUERY.username]: user };
}
