/**
 * `sandbox-iac/client` as a user's program loads it: through the package's
 * exports (a self-reference from the repository root), from the built dist.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");

/** What a fresh Node process sees after `require(specifier)`. */
function load(specifier: string): { exports: string[]; files: string[]; packages: string[] } {
  const script = `
    const m = require(${JSON.stringify(specifier)});
    const loaded = Object.keys(require.cache);
    const pkg = (f) => {
      const rest = f.split("/node_modules/").pop().split("/");
      return rest[0].startsWith("@") ? rest[0] + "/" + rest[1] : rest[0];
    };
    console.log(JSON.stringify({
      exports: Object.keys(m).sort(),
      files: loaded.filter((f) => !f.includes("/node_modules/")).map((f) => require("path").relative(process.cwd(), f)),
      packages: [...new Set(loaded.filter((f) => f.includes("/node_modules/")).map(pkg))].sort(),
    }));`;
  return JSON.parse(
    execFileSync(process.execPath, ["-e", script], { cwd: ROOT, encoding: "utf8" }),
  );
}

describe("sandbox-iac/client", () => {
  it("exports both clients and the error type", () => {
    const { exports } = load("sandbox-iac/client");
    expect(exports).toEqual(
      expect.arrayContaining([
        "createControlClient",
        "createSandboxClient",
        "SandboxIacError",
        "ERROR_CODES",
      ]),
    );
  });

  it("loads neither the resources, the adapters nor the local service", () => {
    const { files, packages } = load("sandbox-iac/client");
    const outside = files.filter(
      (f) => !/^dist\/(client|wire|gen\/envd)\//.test(f) && !/^dist\/(config|errors)\.js$/.test(f),
    );
    expect(outside).toEqual([]);
    expect(packages).toEqual([
      "@bufbuild/protobuf",
      "@connectrpc/connect",
      "@connectrpc/connect-node",
      "openapi-fetch",
      "zod",
    ]);
  });
});
