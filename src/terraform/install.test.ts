import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { parseArgs } from "../cli/args";
import { LAUNCHER, POINTER_FILE, installProvider, packageVersion } from "./install";

describe("sandbox-iac terraform install", () => {
  const dirs: string[] = [];
  const temp = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "tf-install-"));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("writes the unpacked layout terraform init -plugin-dir reads, with an executable launcher", () => {
    const dir = temp();
    const result = installProvider({
      dir,
      version: "1.2.3",
      entry: "/opt/x/main.js",
      node: "/usr/bin/node",
    });
    expect(path.relative(dir, result.launcher)).toMatch(
      /^registry\.terraform\.io\/sandbox-iac\/sandboxiac\/1\.2\.3\/[a-z]+_[a-z0-9]+\/terraform-provider-sandboxiac_v1\.2\.3$/,
    );
    expect(statSync(result.launcher).mode & 0o111).toBe(0o111);
    expect(readFileSync(path.join(dir, POINTER_FILE), "utf8")).toBe(
      "/usr/bin/node\n/opt/x/main.js\n",
    );
    expect(result.instructions).toContain(`terraform init -plugin-dir ${dir}`);
    expect(result.instructions).toContain(`filesystem_mirror {\n      path    = "${dir}"`);
    expect(result.instructions).toContain('exclude = ["sandbox-iac/sandboxiac"]');
  });

  it("writes the same launcher bytes wherever the package and the directory are", () => {
    const a = installProvider({ dir: temp(), version: "0.1.0", entry: "/a/main.js" });
    const b = installProvider({ dir: temp(), version: "0.1.0", entry: "/elsewhere/b/main.js" });
    const hash = (f: string) => createHash("sha256").update(readFileSync(f)).digest("hex");
    expect(hash(a.launcher)).toBe(hash(b.launcher));
    expect(readFileSync(a.launcher, "utf8")).toBe(LAUNCHER);
    expect(LAUNCHER).not.toMatch(/\/(tmp|work|home|usr|opt)\//);
  });

  it("takes --dir from the command line and refuses unknown options", () => {
    expect(parseArgs(["terraform", "install", "--dir", "/x"])).toEqual({
      command: "terraform-install",
      dir: "/x",
    });
    expect(parseArgs(["terraform", "install"])).toMatchObject({ command: "terraform-install" });
    expect(() => parseArgs(["terraform", "install", "--force"])).toThrow(
      /option must be one of --dir, got "--force"/,
    );
    expect(() => parseArgs(["terraform", "uninstall"])).toThrow(/must be install/);
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
