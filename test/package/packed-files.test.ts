/**
 * The published tarball (`npm pack --dry-run`, after `npm run build`): what
 * the agent bundle needs is inside it, and the library's own dependencies are
 * only what a library user loads.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");
const AGENT_DIR = path.join(ROOT, "dist", "agent");

function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  return pack.files.map((f) => f.path);
}

describe("the packed package", () => {
  it("carries the agent bundle with node-pty's JS and compiled addon, and no agent sources", () => {
    const files = packedFiles();
    const agent = files.filter((f) => f.startsWith("dist/agent/"));
    expect(agent).toEqual(
      expect.arrayContaining([
        "dist/agent/agent.js",
        "dist/agent/agent-full.js",
        "dist/agent/agent-full.js.cache",
        "dist/agent/node_modules/node-pty/package.json",
        "dist/agent/node_modules/node-pty/lib/index.js",
        "dist/agent/node_modules/node-pty/build/Release/pty.node",
      ]),
    );
    // tsc output of src/agent would be dead weight: the bundle inlines it.
    const sources = agent.filter(
      (f) =>
        /\.(js|d\.ts|js\.map)$/.test(f) &&
        !/^dist\/agent\/(agent(-full)?\.js(\.map)?|node_modules\/node-pty\/.+)$/.test(f),
    );
    expect(sources).toEqual([]);
    expect(agent.filter((f) => f.endsWith(".test.js"))).toEqual([]);
  });

  it("does not make a library user install the agent's native or multipart dependencies", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).not.toContain("node-pty");
    expect(Object.keys(manifest.dependencies)).not.toContain("busboy");
  });

  it("lets the bundled agent load node-pty from dist, not from the repository's node_modules", () => {
    const script = `
      const resolved = require.resolve("node-pty", { paths: [${JSON.stringify(AGENT_DIR)}] });
      const pty = require(resolved);
      const term = pty.spawn("/bin/sh", ["-c", "echo pty-ok"], {});
      let out = "";
      term.onData((d) => (out += d));
      term.onExit(({ exitCode }) => console.log(JSON.stringify({ resolved, out, exitCode })));`;
    const result = JSON.parse(
      execFileSync(process.execPath, ["-e", script], { cwd: "/", encoding: "utf8" }),
    ) as { resolved: string; out: string; exitCode: number };
    expect(path.relative(AGENT_DIR, result.resolved)).toBe(
      path.join("node_modules", "node-pty", "lib", "index.js"),
    );
    expect(result.out).toContain("pty-ok");
    expect(result.exitCode).toBe(0);
  });
});
