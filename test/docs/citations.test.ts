/**
 * Every document a comment cites is in the repository: each `docs/<file>.md`
 * path exists and each `#section` names one of its headings (GitHub's anchor
 * of the heading text). Citations of the outside reference documents the code
 * was first written from are refused: their facts live in `docs/` now.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

const REPO = path.resolve(__dirname, "..", "..");
const SCANNED = ["src", "test", "scripts", "bench", "schema", "examples", "docs", "README.md"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", "bin", ".terraform", "cdktf.out"]);
const TEXT = /\.(ts|js|mjs|cjs|md|proto|ya?ml|json|tf)$/;
/** The reference documents outside the repository that comments used to cite. */
const OUTSIDE_DOCS =
  /\b(wire-protocol|official-sdk-behaviour|baselines|isolation-recipe|pulumi-dynamic-providers|terraform-and-cdktf|cdk-bindings)\.md\b|\/work\/shared\//;
/** `docs/x.md` or `docs/x.md#section`, not inside a longer path such as `foo/docs/`. */
const CITATION = /(?<![\w/.-])docs\/([\w./-]+\.md)(?:#([\w-]+))?/g;

function files(rel: string): string[] {
  const abs = path.join(REPO, rel);
  if (!existsSync(abs)) return [];
  if (statSync(abs).isFile()) return TEXT.test(rel) ? [rel] : [];
  return readdirSync(abs)
    .filter((name) => !SKIPPED_DIRS.has(name))
    .flatMap((name) => files(path.join(rel, name)));
}

/** GitHub's anchor of a heading: lower-cased, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(doc: string): Set<string> {
  const text = readFileSync(path.join(REPO, doc), "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchorOf(m[1])));
}

interface Citation {
  where: string;
  doc: string;
  section: string | undefined;
}

const scanned = SCANNED.flatMap(files).filter((f) => !f.startsWith(path.join("test", "docs")));
const citations: Citation[] = scanned.flatMap((file) =>
  readFileSync(path.join(REPO, file), "utf8")
    .split("\n")
    .flatMap((line, i) =>
      [...line.matchAll(CITATION)].map((m) => ({
        where: `${file}:${i + 1}`,
        doc: path.join("docs", m[1]),
        section: m[2],
      })),
    ),
);

describe("citations of docs/", () => {
  it("finds the citations it checks", () => {
    // A broken pattern would find nothing and pass: the tree cites dozens.
    expect(citations.length).toBeGreaterThan(50);
  });

  it("cites only documents that exist", () => {
    const missing = citations.filter((c) => !existsSync(path.join(REPO, c.doc)));
    expect(missing.map((c) => `${c.where}: ${c.doc} does not exist`)).toEqual([]);
  });

  it("cites only sections that exist, by their heading's anchor", () => {
    const broken = citations
      .filter((c) => c.section !== undefined && existsSync(path.join(REPO, c.doc)))
      .filter((c) => !anchorsOf(c.doc).has(c.section!))
      .map(
        (c) =>
          `${c.where}: ${c.doc} has no section #${c.section} (it has ${[...anchorsOf(c.doc)].map((a) => `#${a}`).join(", ")})`,
      );
    expect(broken).toEqual([]);
  });

  it("cites no reference document from outside the repository", () => {
    // docs/README.md names them once, in the table of what each one became.
    const outside = scanned
      .filter((file) => file !== path.join("docs", "README.md"))
      .flatMap((file) =>
        readFileSync(path.join(REPO, file), "utf8")
          .split("\n")
          .flatMap((line, i) =>
            OUTSIDE_DOCS.test(line)
              ? [
                  `${file}:${i + 1}: ${line.trim()} (cite docs/: see docs/README.md#former-citations)`,
                ]
              : [],
          ),
      );
    expect(outside).toEqual([]);
  });

  it("computes anchors as GitHub does", () => {
    expect(anchorOf("Authentication, users and headers")).toBe("authentication-users-and-headers");
    expect(anchorOf("Proto3 JSON mapping")).toBe("proto3-json-mapping");
    expect(anchorOf("What pulumi up shows")).toBe("what-pulumi-up-shows");
  });
});
