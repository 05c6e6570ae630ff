/**
 * The check behind the "one definition" tests: which source files of the
 * package hold a given literal (generated code and tests aside).
 */
import * as fs from "node:fs";
import * as path from "node:path";

const SRC = path.resolve(__dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "gen" ? [] : sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [p] : [];
  });
}

/** The files under `src/` (relative to it, `src/gen` and tests aside) that contain any of `literals`. */
export function sourcesHolding(literals: readonly string[]): string[] {
  return sources(SRC)
    .filter((file) => {
      const text = fs.readFileSync(file, "utf8");
      return literals.some((l) => text.includes(l));
    })
    .map((file) => path.relative(SRC, file));
}
