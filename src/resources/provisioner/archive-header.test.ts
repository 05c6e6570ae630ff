/**
 * MemberHeaders against the tar package's own `Header.encode`: the same 512
 * bytes for every name, mode and size it copies, and `Header`'s answer (pax
 * or not) for the names it leaves to it.
 */
import { Header } from "tar";
import { BLOCK, MemberHeaders } from "./archive-header";

const MTIME = new Date("2026-11-27T18:00:00.123Z");

/** `Header`'s own block and answer for a member, as packChunks used to encode every one. */
function byHeader(name: string, mode: number, size: number): { block: Buffer; pax: boolean } {
  const block = Buffer.alloc(BLOCK);
  const pax = new Header({ path: name, mode, size, mtime: MTIME, type: "File" }).encode(block, 0);
  return { block, pax };
}

/** MemberHeaders' block and answer, written at an offset into a buffer of other bytes. */
function byCopy(
  headers: MemberHeaders,
  name: string,
  mode: number,
  size: number,
): { block: Buffer; pax: boolean } {
  const out = Buffer.alloc(3 * BLOCK, 0xa5);
  const pax = headers.encode(out, BLOCK, name, mode, size);
  expect(out.subarray(0, BLOCK).every((b) => b === 0xa5)).toBe(true);
  expect(out.subarray(2 * BLOCK).every((b) => b === 0xa5)).toBe(true);
  return { block: Buffer.from(out.subarray(BLOCK, 2 * BLOCK)), pax };
}

describe("MemberHeaders", () => {
  it("writes the same bytes as tar's Header for plain names, every mode and sizes up to the field's digits", () => {
    // GIVEN one encoder reused for every member, as packChunks uses it
    const headers = new MemberHeaders(MTIME);
    const names = [
      "a",
      "home/user/tree/dir000/file00000.dat",
      "relative/with space/and~tilde-_.+=,@",
      "x".repeat(99),
      `${"deep/".repeat(19)}1234`,
    ];
    const modes = [0, 0o600, 0o644, 0o755, 0o4755, 0o7777];
    const sizes = [0, 1, 511, 512, 513, 4608, 1 << 20, 2 ** 30 - 1];

    // WHEN each member is encoded both ways THEN the blocks are byte for byte the same
    for (const name of names)
      for (const mode of modes)
        for (const size of sizes) {
          const want = byHeader(name, mode, size);
          const got = byCopy(headers, name, mode, size);
          expect({ name, mode, size, pax: got.pax }).toEqual({ name, mode, size, pax: want.pax });
          expect(got.block.equals(want.block)).toBe(true);
        }
  });

  it("leaves long names, names not in ASCII and sizes past the field's digits to tar's Header, pax answer included", () => {
    // GIVEN members a copy cannot take, among them a name whose UTF-8 fills
    // as many bytes as it has characters only once cut off
    const headers = new MemberHeaders(MTIME);
    const members: Array<[string, number]> = [
      ["x".repeat(100), 10],
      [`${"deep-directory/".repeat(20)}file.txt`, 10],
      ["café/menu.txt", 10],
      [`${"a".repeat(97)}éé`, 10],
      ["emoji-😀.txt", 10],
      ["big.bin", 2 ** 30],
    ];

    // WHEN encoded THEN each block and answer is Header's own
    for (const [name, size] of members) {
      const want = byHeader(name, 0o644, size);
      const got = byCopy(headers, name, 0o644, size);
      expect({ name, pax: got.pax }).toEqual({ name, pax: want.pax });
      expect(got.block.equals(want.block)).toBe(true);
    }
    // AND a plain member after them is still the copy Header would write
    expect(
      byCopy(headers, "after.txt", 0o644, 5).block.equals(byHeader("after.txt", 0o644, 5).block),
    ).toBe(true);
  });
});
