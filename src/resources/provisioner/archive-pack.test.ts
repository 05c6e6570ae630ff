/**
 * packChunks() against the tar package's own parser: names (pax for long
 * ones), modes and contents come out as packed; a file changed since it was
 * listed fails the upload.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { Parser, type ReadEntry } from "tar";
import { SandboxIacError } from "../../errors";
import { packChunks } from "./archive-pack";
import type { ManifestEntry } from "./manifest-entry";

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), "archive-pack-"));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** A local file with `content`, listed as going to `remotePath` with `mode`. */
function entry(name: string, content: Buffer, remotePath: string, mode = 0o644): ManifestEntry {
  const localPath = path.join(work, name);
  writeFileSync(localPath, content);
  return { localPath, remotePath, size: content.length, mode, sha256: "" };
}

async function unpack(
  entries: ManifestEntry[],
): Promise<Array<{ path: string; mode: number; type: string; body: Buffer }>> {
  const out: Array<{ path: string; mode: number; type: string; body: Buffer }> = [];
  const parser = new Parser({
    strict: true,
    onReadEntry(e: ReadEntry) {
      const parts: Buffer[] = [];
      e.on("data", (c: Buffer) => parts.push(c));
      e.on("end", () =>
        out.push({ path: e.path, mode: e.mode ?? -1, type: e.type, body: Buffer.concat(parts) }),
      );
    },
  });
  const ended = new Promise<void>((resolve, reject) => {
    parser.on("end", resolve);
    parser.on("error", reject);
  });
  for await (const chunk of packChunks(entries)) parser.write(Buffer.from(chunk));
  parser.end();
  await ended;
  return out;
}

describe("packChunks()", () => {
  it("packs each file under its remote path with its mode and exact content, long names included", async () => {
    // GIVEN files of sizes around the block size, one name longer than a header holds
    const long = `/home/user/${"deep-directory/".repeat(20)}file.txt`;
    const entries = [
      entry("empty", Buffer.alloc(0), "/home/user/empty"),
      entry("block", Buffer.alloc(512, 7), "relative/block.bin", 0o600),
      entry("odd", Buffer.from("odd size\n"), long, 0o755),
      entry("big", Buffer.alloc((1 << 20) + 3, 1), "/opt/big.bin"),
    ];

    // WHEN packed and read back by tar's parser
    const members = await unpack(entries);

    // THEN every member is a regular file with its name, mode and bytes
    expect(members.map((m) => [m.path, m.type, m.mode])).toEqual([
      ["home/user/empty", "File", 0o644],
      ["relative/block.bin", "File", 0o600],
      [long.slice(1), "File", 0o755],
      ["opt/big.bin", "File", 0o644],
    ]);
    expect(members[0].body.length).toBe(0);
    expect(members[1].body.equals(Buffer.alloc(512, 7))).toBe(true);
    expect(members[2].body.toString()).toBe("odd size\n");
    expect(members[3].body.equals(Buffer.alloc((1 << 20) + 3, 1))).toBe(true);
  });

  it("fails when a file's size changed since it was listed", async () => {
    // GIVEN a listed file that grew, and one that shrank, afterwards
    const grown = entry("grown", Buffer.from("abc"), "/home/user/grown");
    writeFileSync(grown.localPath, "abcdef");
    const shrunk = entry("shrunk", Buffer.from("abcdef"), "/home/user/shrunk");
    writeFileSync(shrunk.localPath, "abc");

    // WHEN packed THEN each fails with a conflict naming the file
    for (const e of [grown, shrunk]) {
      const failure = await unpack([e]).catch((err: unknown) => err);
      expect(SandboxIacError.hasCode(failure, "conflict")).toBe(true);
      expect(String((failure as Error).message)).toContain(e.localPath);
    }
  });
});
