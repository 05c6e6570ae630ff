import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../errors";
import { serveApiKey } from "./api-key";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "api-key-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function keyFile(content: string, mode = 0o600): string {
  const file = path.join(dir, "key");
  fs.writeFileSync(file, content, { mode });
  fs.chmodSync(file, mode);
  return file;
}

describe("serveApiKey()", () => {
  it("reads the first line of --api-key-file, without its newline", () => {
    const warnings: string[] = [];
    const got = serveApiKey({ apiKeyFile: keyFile("e2b_fromfile\nignored\n") }, {}, (l) =>
      warnings.push(l),
    );
    expect(got).toEqual({ key: "e2b_fromfile", source: "--api-key-file" });
    expect(warnings).toEqual([]);
  });

  it("takes E2B_API_KEY when no option names a key", () => {
    expect(serveApiKey({}, { E2B_API_KEY: "e2b_fromenv" }, () => undefined)).toEqual({
      key: "e2b_fromenv",
      source: "E2B_API_KEY",
    });
  });

  it("prefers the file to the environment, and --api-key to both", () => {
    const file = keyFile("e2b_fromfile\n");
    const env = { E2B_API_KEY: "e2b_fromenv" };
    expect(serveApiKey({ apiKeyFile: file }, env, () => undefined).key).toBe("e2b_fromfile");
    expect(serveApiKey({ apiKey: "e2b_flag" }, env, () => undefined).key).toBe("e2b_flag");
  });

  it("leaves the key to the data dir when nothing names one (an empty E2B_API_KEY is unset)", () => {
    expect(serveApiKey({}, { E2B_API_KEY: " " }, () => undefined)).toEqual({
      key: undefined,
      source: "data dir",
    });
  });

  it("warns when the key file is readable by other host users", () => {
    const warnings: string[] = [];
    serveApiKey({ apiKeyFile: keyFile("e2b_k\n", 0o644) }, {}, (l) => warnings.push(l));
    expect(warnings).toEqual([
      `--api-key-file ${path.join(dir, "key")} has mode 0644: other host users may read the key; chmod 600 it`,
    ]);
  });

  it("fails when the key file is missing or its first line is empty", () => {
    const missing = path.join(dir, "nope");
    const gone = (() => {
      try {
        serveApiKey({ apiKeyFile: missing }, {}, () => undefined);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(SandboxIacError.hasCode(gone, "invalid_argument")).toBe(true);
    expect((gone as Error).message).toContain(
      `--api-key-file "${missing}" cannot be read (ENOENT)`,
    );
    expect(() => serveApiKey({ apiKeyFile: keyFile("\nsecond\n") }, {}, () => undefined)).toThrow(
      /--api-key-file must be a file whose first line is the key/,
    );
  });
});
