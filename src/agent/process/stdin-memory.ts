/**
 * Keeps a bulk stdin stream through Connect (`StreamInput` in JSON, as the
 * SDK sends it; the Provisioner's binary archive into `tar` goes through
 * `stdin-stream.ts`) from driving the agent into major garbage collections.
 *
 * Why: every MiB of stdin costs about 2 MiB of ArrayBuffers (the HTTP
 * parser's 64 KiB body chunks, then Connect's envelope of the whole message).
 * V8 counts ArrayBuffer bytes allocated since the last mark-compact against
 * the old generation's limit, and frees young ones only in a scavenge; with
 * the agent's young generation capped at 1 MiB (src/agent/main.ts) and little
 * JavaScript allocation per message, scavenges came too rarely, so the limit
 * was reached first: about one mark-compact per 50 MiB upload (traced with
 * `--trace-gc`), and buffers that lived across two scavenges (a message
 * draining into the pipe while the generators of Connect's pipeline still
 * held it) were promoted and freed only by the next one.
 *
 * @module
 */
import { ScavengeEvery } from "../../wire/scavenge";

/**
 * Below this a message's bytes are left alone: a small view may share its
 * ArrayBuffer (Node's 8 KiB pool), and a write below a pipe's highWaterMark
 * (16 KiB) has no drain that says it completed.
 */
const RELEASE_MIN_BYTES = 64 * 1024;
/** Most bytes of an ArrayBuffer that are not the message's own input: the protobuf tags and lengths around it. */
const ENVELOPE_OVERHEAD_MAX_BYTES = 16;

/** Stdin bytes between forced scavenges: one per message of the Provisioner's 1 MiB, one per 512 KiB of small writes. */
const SCAVENGE_AFTER_BYTES = 512 * 1024;

/**
 * Frees `bytes`' memory now when it is a message's own buffer (Connect
 * assembles each message into an ArrayBuffer of its own): its ArrayBuffer is
 * detached into a young copy that dies at the next scavenge, whatever
 * generation the original reached. Only for bytes the pipe has taken whole.
 */
function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer;
  if (!(buffer instanceof ArrayBuffer) || bytes.byteLength < RELEASE_MIN_BYTES) return;
  if (buffer.byteLength > bytes.byteLength + ENVELOPE_OVERHEAD_MAX_BYTES) return;
  structuredClone(buffer, { transfer: [buffer] });
}

/** The memory of one `StreamInput` call's stdin: what was written last, and how much since the last scavenge. */
export class StdinMemory {
  private written: Uint8Array | undefined;
  /** Bytes written since the pipe last took everything. */
  private pending = 0;
  private readonly scavenges = new ScavengeEvery(SCAVENGE_AFTER_BYTES);

  /**
   * Records `bytes` as written to the process's stdin pipe. Call {@link taken}
   * only once the pipe's drain says the write completed.
   */
  wrote(bytes: Uint8Array): void {
    this.written = bytes;
    this.pending += bytes.byteLength;
  }

  /** The pipe has taken everything written: frees the last bytes, and scavenges after enough of them. */
  taken(): void {
    if (this.written) release(this.written);
    this.written = undefined;
    this.scavenges.add(this.pending);
    this.pending = 0;
  }
}
