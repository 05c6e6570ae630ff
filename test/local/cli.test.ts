/**
 * The `sandbox-iac` command as a person runs it (the built `dist/cli/main.js`):
 * `--version`, a command's own help, and `status` against the REAL local
 * service, listing its sandboxes, templates and builds with their state.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { packageVersion } from "../../src/terraform/install";
import { controlClientOf, startService, type TestService } from "../support/service";

jest.setTimeout(120_000);

const CLI = path.resolve(__dirname, "..", "..", "dist", "cli", "main.js");

/** Runs the CLI without blocking this process (the service answers from it). */
async function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  return { code, stdout, stderr };
}

describe("sandbox-iac command line", () => {
  it("prints its version", async () => {
    const { code, stdout } = await run(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toBe(`sandbox-iac ${packageVersion()}\n`);
  });

  it("prints a command's own help, and suggests the option a typo meant", async () => {
    expect((await run(["serve", "--help"])).stdout).toContain("Usage: sandbox-iac serve");
    const typo = await run(["serve", "--prot", "3001"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean --port?");
  });

  describe("status", () => {
    let svc: TestService;
    let sandboxID = "";
    beforeAll(async () => {
      svc = await startService();
      sandboxID = (await controlClientOf(svc).createSandbox({ templateID: "base", timeout: 300 }))
        .sandboxID;
    });
    afterAll(async () => {
      await controlClientOf(svc)
        .killSandbox(sandboxID)
        .catch(() => undefined);
      await svc?.close();
    });

    it("shows the service URL and its sandboxes, templates and builds with their state", async () => {
      const { code, stdout, stderr } = await run(["status"], {
        E2B_API_URL: svc.apiUrl,
        E2B_API_KEY: svc.apiKey,
      });
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(stdout).toContain(`service: ${svc.apiUrl} (from env)`);
      expect(stdout).toMatch(new RegExp(`${sandboxID} +running +base`));
      expect(stdout).toMatch(/templates \(\d+\):\n {2}\S+ +base +ready/);
      expect(stdout).toMatch(/builds \(\d+\):\n {2}\S+ +ready +base/);
    });

    it("says where it looked and how to start a service when none answers", async () => {
      const { code, stderr } = await run(["status"], {
        E2B_API_URL: "http://127.0.0.1:1",
        E2B_API_KEY: svc.apiKey,
      });
      expect(code).toBe(1);
      expect(stderr).toContain("cannot connect to http://127.0.0.1:1");
      expect(stderr).toContain("sandbox-iac serve");
    });
  });
});
