/**
 * The tar headers of an archive's members (`archive-pack.ts`). The
 * maintained `tar` package's `Header` encodes one block, for an empty name:
 * the members differ only in name, mode and size, so each member's header
 * is a copy of that block with those fields and the checksum written as
 * `Header` writes them (octal digits padded with zeros, then a space and a
 * NUL). A name `Header` would split into a prefix or put in a pax header
 * (100 bytes or more, or not ASCII), and a field too large for its digits,
 * go through `Header` itself.
 *
 * Why: in a fresh process (each apply is one) `Header.encode` took about
 * 4 µs per member, 40-43 ms of CPU per 10,000 files, and the copy 1.3 µs;
 * packing and framing the 10,000 files of bench/provisioner.js's tree took
 * 139-147 ms of a fresh process's CPU with `Header` for every member, 99-100
 * ms this way. On a machine where the upload's processes share two cores,
 * the client's CPU is a third of the upload's. The test holds the copies to
 * `Header`'s bytes.
 *
 * @module
 */
import { Header } from "tar";

/** tar's block: headers and file bodies take whole blocks. */
export const BLOCK = 512;

/** Where `Header` puts each field a member changes: offset and width in bytes. */
const NAME = { at: 0, width: 100 } as const;
const MODE = { at: 100, width: 8 } as const;
const SIZE = { at: 124, width: 12 } as const;
const CHECKSUM = { at: 148, width: 8 } as const;

/** A checksum counts its own field as eight spaces (POSIX ustar). */
const CHECKSUM_AS_SPACES = 8 * 0x20;

/**
 * True when `value` is a whole number `width` bytes take as `Header` writes
 * them there: all but two bytes are digits. `Header` writes others another
 * way (a negative or larger one in base 256, one more digit without the
 * space).
 */
function fitsOctal(value: number, width: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < 8 ** (width - 2);
}

/**
 * Writes `value` into `out` at `at` as `Header` writes a number field of
 * `width` bytes (zero-padded octal, a space, a NUL); returns the sum of the
 * bytes written, for the checksum. `value` must fit ({@link fitsOctal}).
 */
function writeOctal(out: Buffer, at: number, width: number, value: number): number {
  out[at + width - 2] = 0x20;
  out[at + width - 1] = 0;
  let sum = 0x20;
  let rest = value;
  for (let i = at + width - 3; i >= at; i--) {
    const digit = 0x30 + (rest % 8);
    out[i] = digit;
    sum += digit;
    rest = Math.floor(rest / 8);
  }
  return sum;
}

/** The sum of `length` bytes of `out` from `at`; undefined when one of them is not ASCII. */
function asciiSum(out: Buffer, at: number, length: number): number | undefined {
  let sum = 0;
  for (let i = at; i < at + length; i++) {
    const byte = out[i];
    if (byte >= 0x80) return undefined;
    sum += byte;
  }
  return sum;
}

/** Encodes the headers of an archive's regular-file members, all with one mtime. */
export class MemberHeaders {
  /** For the members a copy cannot take. */
  private readonly header: Header;
  /** `Header`'s block for an empty name, mode 0 and size 0. */
  private readonly template = Buffer.alloc(BLOCK);
  /** The template's checksum without the fields a member changes. */
  private readonly fixedSum: number;

  constructor(mtime: Date) {
    this.header = new Header({ path: "", mode: 0, size: 0, mtime, type: "File" });
    this.header.encode(this.template, 0);
    let sum = CHECKSUM_AS_SPACES;
    for (let i = 0; i < BLOCK; i++) sum += this.template[i];
    for (const field of [NAME, MODE, SIZE, CHECKSUM])
      for (let i = field.at; i < field.at + field.width; i++) sum -= this.template[i];
    this.fixedSum = sum;
  }

  /**
   * Writes the header of a member `name` (relative, normalised) with `mode`
   * and `size` at `out[at, at + BLOCK)`. Returns true when the name needs a
   * pax header before this one, as `Header.encode` answers.
   */
  encode(out: Buffer, at: number, name: string, mode: number, size: number): boolean {
    if (name.length < NAME.width && fitsOctal(mode, MODE.width) && fitsOctal(size, SIZE.width)) {
      this.template.copy(out, at);
      const written = out.write(name, at + NAME.at, NAME.width, "utf8");
      // As many bytes as characters, all ASCII: the whole name, one byte each.
      // Else `Header`, and its pax.
      const nameSum = written === name.length ? asciiSum(out, at + NAME.at, written) : undefined;
      if (nameSum !== undefined) {
        let sum = this.fixedSum + nameSum;
        sum += writeOctal(out, at + MODE.at, MODE.width, mode);
        sum += writeOctal(out, at + SIZE.at, SIZE.width, size);
        writeOctal(out, at + CHECKSUM.at, CHECKSUM.width, sum);
        return false;
      }
    }
    const header = this.header;
    header.path = name;
    header.mode = mode;
    header.size = size;
    // Encoded in place; the fields it leaves alone must be zeros.
    out.fill(0, at, at + BLOCK);
    return header.encode(out, at);
  }
}
