/**
 * Volumes and secrets survive `kill -9` of the service: the CLI is killed
 * after a sandbox wrote into a mounted volume; the restarted service has the
 * volume, its content, its token and the secret, and the sandbox resumes
 * with the volume mounted again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import { Sandbox, Secret, Volume } from "e2b";
import type { LocalService } from "../../src/local";
import { agentBundleDir, startService, tempDataDir } from "../local/support";

const CLI = path.resolve(__dirname, "..", "..", "dist", "cli", "main.js");
let child: ChildProcess | undefined;
let svc: LocalService | undefined;
let dataDir: string | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await svc?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

it("keeps volumes, their content and secrets across kill -9, and remounts on resume", async () => {
  if (!fs.existsSync(CLI)) throw new Error(`no CLI at ${CLI}: run \`npm run build\` first`);
  dataDir = tempDataDir();
  child = spawn(
    process.execPath,
    [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--agent-dir", await agentBundleDir()],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const ready = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child!.stdout! }).once("line", resolve);
    child!.once("exit", (code) => reject(new Error(`the CLI exited with ${String(code)}`)));
  });
  const apiUrl = /E2B_API_URL=(\S+)/.exec(ready)?.[1] ?? "";
  const apiKey = /E2B_API_KEY=(\S+)/.exec(ready)?.[1] ?? "";
  const opts = { apiUrl, apiKey, sandboxUrl: apiUrl };

  const vol = await Volume.create("crash-vol", opts);
  await vol.writeFile("/before.txt", "written before", { apiUrl });
  const secret = await Secret.create("crash-secret", "crash-secret-value", opts);
  const sbx = await Sandbox.create({
    ...opts,
    volumeMounts: { "/mnt/v": vol },
    timeoutMs: 300_000,
  });
  await sbx.commands.run("echo from-sandbox > /mnt/v/inside.txt");

  const exited = new Promise((r) => child!.once("exit", r));
  child.kill("SIGKILL");
  await exited;

  svc = await startService(dataDir);
  const again = { apiUrl: svc.apiUrl, apiKey: svc.apiKey, sandboxUrl: svc.sandboxUrl };
  const back = await Volume.connect(vol.volumeId, again);
  expect(back.token).toBe(vol.token);
  expect(await back.readFile("/before.txt", { apiUrl: svc.apiUrl })).toBe("written before");
  expect(await back.readFile("/inside.txt", { apiUrl: svc.apiUrl })).toBe("from-sandbox\n");
  expect((await Secret.getInfo("crash-secret", again)).secretId).toBe(secret.secretId);

  const resumed = await Sandbox.connect(sbx.sandboxId, { ...again, timeoutMs: 120_000 });
  expect((await resumed.commands.run("cat /mnt/v/inside.txt /mnt/v/before.txt")).stdout).toBe(
    "from-sandbox\nwritten before",
  );
  expect((await resumed.getInfo()).volumeMounts).toEqual([{ name: "crash-vol", path: "/mnt/v" }]);
  await resumed.kill();
});
