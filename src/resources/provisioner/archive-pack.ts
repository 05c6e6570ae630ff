/**
 * Packs a manifest's small files into a tar stream, in chunks ready to send.
 * Headers are the maintained `tar` package's: `Header`'s block, with each
 * member's name, mode and size written into a copy of it as `Header` writes
 * them (`archive-header.ts`), and `Pax` for a name too long or not ASCII for
 * one. This module places each file's bytes after its header, read with one
 * `read` straight into the outgoing chunk.
 *
 * Why not the package's packer: for 10,000 files of 1-8 KiB its synchronous
 * `PackSync` took about 1.1 s of CPU against 0.5 s here (a stat, a stream
 * object, a header object and a buffer per file, then a copy of every byte
 * into the chunk), and the client's CPU was most of the Provisioner's time
 * on a tree of small files (bench/provisioner.js). The archive is the same
 * but for the modes (the declared ones, not the package's "portable" ones;
 * the Provisioner sets declared modes anyway) and the mtime (one for all:
 * the sandbox's `tar -x -m` ignores it).
 *
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";
import { Pax } from "tar";
import { SandboxIacError } from "../../errors";
import { framableBuffer, STDIN_FRAME_HEADROOM } from "../../wire/stdin-frame";
import { BLOCK, MemberHeaders } from "./archive-header";
import type { ManifestEntry } from "./manifest-entry";
import { normalRemotePath } from "./remote-path";

/** Two zero blocks end an archive. */
const END_OF_ARCHIVE = 2 * BLOCK;

/**
 * Bytes of archive per chunk: large enough that per-message costs (framing,
 * a write to tar's stdin) vanish, small enough that the sandbox extracts the
 * first members while later ones are still packed.
 */
const CHUNK_BYTES = 1 << 20;
/**
 * Chunk buffers used in turn: a chunk's buffer is filled again only once
 * the third chunk after it is asked for, long after the request's writer
 * serialised it (Connect copies each message into its frame, then asks for
 * the next once the frame is written). Fresh 1 MiB buffers cost the client
 * their page faults and their collection, 44 of them per 10,000 files.
 */
const RING = 3;
/**
 * Members per chunk at most: a chunk of many tiny files (each a few syscalls)
 * is handed on before the event loop is held up for long.
 */
const CHUNK_FILES = 512;

/** The operation named by the errors of an archive upload. */
const OPERATION = "provisioner.files";

/**
 * A buffer of `bytes` for chunks: the part of a {@link framableBuffer} after
 * its headroom, so that the stdin transport frames each chunk in place
 * (`src/wire/stdin-frame.ts`) rather than copying it into a fresh buffer.
 */
function chunkBuffer(bytes: number): Buffer {
  return framableBuffer(bytes).subarray(STDIN_FRAME_HEADROOM);
}

/** True for batches of entries still coming, rather than one list. */
function isBatches(
  entries: readonly ManifestEntry[] | AsyncIterable<readonly ManifestEntry[]>,
): entries is AsyncIterable<readonly ManifestEntry[]> {
  return Symbol.asyncIterator in entries;
}

/** Bytes `size` takes in the archive, padded to whole blocks. */
function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

/**
 * The error of a file whose size is not the one listed: it changed while
 * the run was under way, and its digest would not match what was sent.
 */
function changedWhileSent(entry: ManifestEntry, read: number): SandboxIacError {
  return new SandboxIacError(
    "conflict",
    `${JSON.stringify(entry.localPath)} (for ${entry.remotePath}) changed while it was being uploaded: ${entry.size} bytes when listed, ${read > entry.size ? "more" : read} now; run again once it is written`,
    { operation: OPERATION, resourceId: entry.localPath },
  );
}

/**
 * Reads `entry`'s content into `out` at `at`: exactly `entry.size` bytes,
 * checked by asking for one more (one read for a small file; a loop only
 * when the kernel returns less than the listed size). `out` has room for
 * `entry.size + 1` bytes.
 */
function readInto(entry: ManifestEntry, out: Buffer, at: number): void {
  let fd: number;
  try {
    fd = openSync(entry.localPath, "r");
  } catch (err) {
    throw SandboxIacError.from(err, { operation: OPERATION });
  }
  try {
    const want = entry.size + 1;
    let got = 0;
    for (;;) {
      const n = readSync(fd, out, at + got, want - got, null);
      got += n;
      // A read of a regular file that returns less than asked stopped at its
      // end: at exactly the listed size there is nothing more to ask (asking
      // again for the end of file cost a syscall per file, 10,000 per tree).
      if (n === 0 || got === want || got === entry.size) break;
    }
    if (got !== entry.size) throw changedWhileSent(entry, got);
  } catch (err) {
    throw SandboxIacError.is(err) ? err : SandboxIacError.from(err, { operation: OPERATION });
  } finally {
    closeSync(fd);
  }
}

/**
 * The archive of `entries` (a list, or batches of them still coming) as
 * chunks of about {@link CHUNK_BYTES}: members
 * named by their remote paths (relative to `/` or to the home directory),
 * regular files with the manifest's modes, symlinks followed, no links
 * between members even when local files share an inode (each is a file, as
 * a per-file upload makes it). Packed as it is consumed, so the reader's
 * backpressure (the request to the sandbox, the sandbox's `tar`) bounds what
 * is held in memory; the loop yields to the event loop between chunks.
 *
 * A file gone, unreadable, or of another size than listed throws.
 * `onContent` sees each file's bytes as they were read into the archive
 * (valid only during the call), e.g. to hash what is sent.
 *
 * A chunk's buffer is filled again once the third chunk after it is asked
 * for (the buffers are used in turn): send or copy each one before then.
 * Each chunk starts right after a {@link framableBuffer}'s headroom, so
 * `stdinFrame` frames it in place (writing into the bytes before it).
 */
export async function* packChunks(
  entries: readonly ManifestEntry[] | AsyncIterable<readonly ManifestEntry[]>,
  onContent?: (entry: ManifestEntry, content: Uint8Array) => void,
): AsyncGenerator<Uint8Array> {
  const mtime = new Date();
  const ring: Buffer[] = [];
  let turn = 0;
  /** The next buffer of the ring, allocated on first use. */
  const nextBuffer = (): Buffer => {
    turn = (turn + 1) % RING;
    return (ring[turn] ??= chunkBuffer(CHUNK_BYTES));
  };
  let out = nextBuffer();
  let pos = 0;
  let members = 0;
  const take = (): Buffer => {
    const chunk = out.subarray(0, pos);
    out = nextBuffer();
    pos = 0;
    members = 0;
    return chunk;
  };
  const headers = new MemberHeaders(mtime);
  // Entries come as one list, or as batches while they are still being listed.
  const batches = isBatches(entries) ? entries : [entries];
  for await (const batch of batches)
    for (const entry of batch) {
      const name = normalRemotePath(entry.remotePath).replace(/^\/+/, "");
      const mode = entry.mode & 0o7777;
      // The body's padding has room for the one byte more `readInto` asks for,
      // except when the size is a multiple of the block: then one block more.
      const body = padded(entry.size);
      const need = BLOCK + padded(entry.size + 1);
      if (pos + need > out.length) {
        if (pos > 0) yield take();
        if (need > out.length) out = chunkBuffer(need);
      }
      if (headers.encode(out, pos, name, mode, entry.size)) {
        // A name too long or not ASCII for the header goes in a pax header before it.
        const block = Buffer.from(out.subarray(pos, pos + BLOCK));
        const pax = new Pax({ path: name, size: entry.size, mtime }).encode();
        if (pos + pax.length + need > out.length) {
          if (pos > 0) yield take();
          if (pax.length + need > out.length) out = chunkBuffer(pax.length + need);
        }
        pos += pax.copy(out, pos);
        block.copy(out, pos);
      }
      pos += BLOCK;
      readInto(entry, out, pos);
      onContent?.(entry, out.subarray(pos, pos + entry.size));
      out.fill(0, pos + entry.size, pos + body);
      pos += body;
      if (pos >= CHUNK_BYTES || ++members >= CHUNK_FILES) yield take();
    }
  if (pos + END_OF_ARCHIVE > out.length) yield take();
  out.fill(0, pos, pos + END_OF_ARCHIVE);
  pos += END_OF_ARCHIVE;
  yield take();
}
