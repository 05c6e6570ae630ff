import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import type { LocalService } from "../../src/local";
import {
  agentBundleDir,
  call,
  createSandbox,
  runThroughProxy,
  startService,
  tempDataDir,
} from "./support";

const ROOT = path.resolve(__dirname, "..", "..");
const dirs: string[] = [];
let svc: LocalService | undefined;
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await svc?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The built CLI; `npm test` builds before it runs the tests. */
async function cliEntry(): Promise<string> {
  const dist = path.join(ROOT, "dist", "cli", "main.js");
  if (!fs.existsSync(dist))
    throw new Error(`no CLI at ${dist}: run \`npm run build\` first (npm test does)`);
  return dist;
}

describe("persistence", () => {
  it("brings sandboxes back paused with their files after close() and a restart", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    svc = await startService(dataDir);
    const key = svc.apiKey;
    expect(key).toMatch(/^e2b_[0-9a-f]{40}$/);
    expect(fs.statSync(path.join(dataDir, "api-key")).mode & 0o777).toBe(0o600);
    const { sandboxID, envdAccessToken } = await createSandbox(svc, {
      secure: true,
      metadata: { keep: "yes" },
    });
    await runThroughProxy(svc, sandboxID, "echo survived > /home/user/data.txt", envdAccessToken);
    await svc.close();

    svc = await startService(dataDir);
    expect(svc.apiKey).toBe(key);
    const info = await call(svc, "GET", `/sandboxes/${sandboxID}`);
    expect(info.body).toMatchObject({
      state: "paused",
      metadata: { keep: "yes" },
      envdAccessToken,
    });
    const resumed = await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 });
    expect(resumed.status).toBe(201);
    expect(
      (await runThroughProxy(svc, sandboxID, "cat /home/user/data.txt", envdAccessToken)).stdout,
    ).toBe("survived\n");
    await svc.close();
    svc = undefined;
  });

  it("brings sandboxes back paused with their files after kill -9 of the CLI", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    child = spawn(
      process.execPath,
      [
        await cliEntry(),
        "serve",
        "--port",
        "0",
        "--data-dir",
        dataDir,
        "--agent-dir",
        await agentBundleDir(),
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const ready = await new Promise<string>((resolve, reject) => {
      const rl = readline.createInterface({ input: child?.stdout as NodeJS.ReadableStream });
      rl.once("line", resolve);
      child?.once("exit", (code) =>
        reject(new Error(`the CLI exited with ${String(code)} before its ready line`)),
      );
    });
    const apiUrl = /E2B_API_URL=(\S+)/.exec(ready)?.[1] ?? "";
    const apiKey = /E2B_API_KEY=(\S+)/.exec(ready)?.[1] ?? "";
    expect(ready).toMatch(/E2B_SANDBOX_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(apiUrl).not.toMatch(/:0$/);
    const remote = { apiUrl, apiKey, sandboxUrl: apiUrl };
    const { sandboxID } = await createSandbox(remote);
    await runThroughProxy(remote, sandboxID, "echo crash-safe > /home/user/c.txt");

    const exited = new Promise((r) => child?.once("exit", r));
    child.kill("SIGKILL");
    await exited;

    svc = await startService(dataDir);
    expect(svc.apiKey).toBe(apiKey);
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      state: "paused",
    });
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/c.txt")).stdout).toBe(
      "crash-safe\n",
    );
  });
});
