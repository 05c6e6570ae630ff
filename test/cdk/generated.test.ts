/**
 * The generated bindings and the two entry points, checked without loading
 * either runtime: the generated code type-checks as the generators wrote it,
 * and no file of one entry point (src/cdktf's code generated into
 * src/cdktf/generated included) reaches the other runtime.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

const ROOT = path.resolve(__dirname, "..", "..");
const NOCHECK = /^\/\/ @ts-nocheck[^\n]*\n/;

/**
 * The imports of every .ts file under `dir`: package names as written,
 * relative imports as the path (from the repository root) they resolve to.
 */
function importsUnder(dir: string): { file: string; specifier: string }[] {
  const out: { file: string; specifier: string }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = path.join(entry.parentPath, entry.name);
    const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
    source.forEachChild((node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        const text = node.moduleSpecifier.text;
        const specifier = text.startsWith(".")
          ? path
              .relative(ROOT, path.resolve(path.dirname(file), text))
              .split(path.sep)
              .join("/")
          : text;
        out.push({ file: path.relative(ROOT, file), specifier });
      }
    });
  }
  return out;
}

describe("generated CDK bindings", () => {
  it("type-check as generated (strict), apart from the override modifiers they omit", () => {
    const entries = ["cdktn", "cdktf"].map((r) => path.join(ROOT, "src", "gen", r, "index.ts"));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      strict: true,
      noImplicitOverride: false,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    // The header line `// @ts-nocheck` is ours; check what the generators wrote.
    host.readFile = (file) => {
      const text = read(file);
      return text !== undefined && file.includes(`${path.sep}gen${path.sep}cdkt`)
        ? text.replace(NOCHECK, "")
        : text;
    };
    const program = ts.createProgram(entries, options, host);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
    // Every generated module was checked (lazy-index.ts is the generators' unused variant).
    const generated = ["cdktn", "cdktf"].flatMap((r) =>
      fs
        .readdirSync(path.join(ROOT, "src", "gen", r), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && f !== "lazy-index.ts")
        .map((f) => path.join(ROOT, "src", "gen", r, f)),
    );
    const checked = new Set(program.getSourceFiles().map((f) => path.resolve(f.fileName)));
    expect(generated.filter((f) => !checked.has(f))).toEqual([]);
  });

  it("let a TypeScript program pass a Provisioner's network.rules as plain objects (strict, as the project compiles)", () => {
    // The program the synth tests synthesize (test/cdk/support/egress-stack.ts),
    // compiled with the project's tsconfig: a map of the generators' list
    // classes, as E2B's Record<domain, Rule[]> became, could not be written there.
    const config = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), (f) => ts.sys.readFile(f));
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram(
      [path.join(ROOT, "test", "cdk", "support", "egress-stack.ts")],
      {
        ...parsed.options,
        noEmit: true,
      },
    );
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
  });

  it("keep each runtime to its own entry point", () => {
    const runtimeOf = (specifier: string) =>
      /^(cdktn|@cdktn|src\/gen\/cdktn|src\/cdktn)(\/|$)/.test(specifier)
        ? "cdktn"
        : /^(cdktf|@cdktf|src\/gen\/cdktf|src\/cdktf)(\/|$)/.test(specifier)
          ? "cdktf"
          : undefined;
    const reached = (dir: string) =>
      new Set(importsUnder(path.join(ROOT, "src", dir)).map((i) => runtimeOf(i.specifier)));
    expect([...reached("cdktn")].filter(Boolean)).toEqual(["cdktn"]);
    expect([...reached("cdktf")].filter(Boolean)).toEqual(["cdktf"]);
    expect([...reached("cdk")].filter(Boolean)).toEqual([]);
    expect([...reached("gen/cdktn")].filter(Boolean)).toEqual(["cdktn"]);
    expect([...reached("gen/cdktf")].filter(Boolean)).toEqual(["cdktf"]);
    // The cdktf entry point's code, derived from src/cdktn by `npm run generate`.
    expect([...reached("cdktf/generated")].filter(Boolean)).toEqual(["cdktf"]);
  });

  it("import nothing hand-written from src/gen (it holds contract bindings only)", () => {
    const outside = importsUnder(path.join(ROOT, "src", "gen"))
      .filter((i) => i.specifier.startsWith("src/") && !i.specifier.startsWith("src/gen/"))
      .map((i) => `${i.file} -> ${i.specifier}`);
    expect(outside).toEqual([]);
  });
});
