/**
 * The data dir's guards at start: one service per dir, mode 0700, and the
 * API key taken from a file or the environment instead of the command line.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../src/errors";
import { startLocalService } from "../../src/local";
import {
  agentBundleDir,
  startService,
  startServiceProcess,
  type ServiceProcess,
  type TestService,
} from "../support/service";
import { call, createSandbox } from "./support";

jest.setTimeout(180_000);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-dd-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function process_(opts: Parameters<typeof startServiceProcess>[0]): Promise<ServiceProcess> {
  const p = await startServiceProcess(opts);
  cleanups.push(() => p.close());
  return p;
}

async function inProcess(dataDir?: string): Promise<TestService> {
  const s = await startService(dataDir ? { dataDir } : {});
  cleanups.push(() => s.close());
  return s;
}

describe("one service per data dir", () => {
  it("refuses a second serve on the same dir with the holder's pid, and leaves the first one's sandboxes running", async () => {
    const first = await process_({});
    const { sandboxID } = await createSandbox(first);
    const second = await startServiceProcess({ dataDir: first.dataDir }).catch((e: Error) => e);
    expect(second).toBeInstanceOf(Error);
    expect((second as Error).message).toContain(
      `data dir ${first.dataDir} is in use by another sandbox-iac service (pid ${first.pid}): one data dir serves one service; stop that one first, or give this one another --data-dir`,
    );
    const info = await call(first, "GET", `/sandboxes/${sandboxID}`);
    expect(info.body).toMatchObject({ state: "running" });
    const ran = await call(first, "GET", "/v2/sandboxes?state=running");
    expect(JSON.stringify(ran.body)).toContain(sandboxID);
  });

  it("refuses a second in-process service with conflict, and starts once the first closed", async () => {
    const first = await inProcess();
    const err = await startLocalService({
      port: 0,
      dataDir: first.dataDir,
      agentBundleDir: await agentBundleDir(),
    }).catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(err, "conflict")).toBe(true);
    expect((err as Error).message).toContain(`(pid ${process.pid})`);
    const dataDir = first.dataDir;
    const again = await first.restart();
    cleanups.push(() => again.close());
    expect((await call(again, "GET", "/health")).status).toBe(200);
    expect(fs.existsSync(dataDir)).toBe(true);
  });

  it("lets a new service start at once after kill -9 of the holder (the kernel drops the lock)", async () => {
    const first = await process_({});
    await first.kill9();
    const next = await inProcess(first.dataDir);
    expect((await call(next, "GET", "/health")).status).toBe(200);
  });
});

describe("the data dir's mode", () => {
  it("sets an existing dir with a wider mode back to 0700 at every start", async () => {
    const dataDir = tempDir();
    fs.chmodSync(dataDir, 0o755);
    const lines: string[] = [];
    const svc = await startService({ dataDir, log: (l) => lines.push(l) });
    cleanups.push(() => svc.close());
    expect(fs.statSync(dataDir).mode & 0o7777).toBe(0o700);
    expect(lines).toContain(
      `data dir ${dataDir} had mode 0755: set to 0700 (it holds the API key and sandbox files no other host user may reach)`,
    );
    await svc.close();
    fs.chmodSync(dataDir, 0o777);
    const again = await inProcess(dataDir);
    expect(again.dataDir).toBe(dataDir);
    expect(fs.statSync(dataDir).mode & 0o7777).toBe(0o700);
  });

  it("creates a missing dir with mode 0700", async () => {
    const dataDir = path.join(tempDir(), "new", "data");
    await inProcess(dataDir);
    expect(fs.statSync(dataDir).mode & 0o7777).toBe(0o700);
  });

  it("refuses a dir owned by another user before writing anything in it", async () => {
    const dataDir = tempDir();
    fs.chownSync(dataDir, 65534, 65534);
    const err = await startService({ dataDir }).catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(err, "permission_denied")).toBe(true);
    expect((err as Error).message).toContain(
      `data dir ${dataDir} is owned by uid 65534, not by the service's uid 0`,
    );
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it("refuses a data dir that is a symlink, naming the fix", async () => {
    const real = tempDir();
    const link = path.join(tempDir(), "link");
    fs.symlinkSync(real, link);
    const err = await startService({ dataDir: link }).catch((e: unknown) => e);
    expect(SandboxIacError.hasCode(err, "invalid_argument")).toBe(true);
    expect((err as Error).message).toContain(
      `data dir ${link} is a symlink (its target could be swapped under the service): give --data-dir a real directory, e.g. the one \`realpath ${link}\` prints`,
    );
    expect(fs.readdirSync(real)).toEqual([]);
  });
});

describe("the API key of serve", () => {
  it("reads the key from --api-key-file, and the key is not in /proc/<pid>/cmdline", async () => {
    const dir = tempDir();
    const keyFile = path.join(dir, "key");
    fs.writeFileSync(keyFile, "e2b_00112233445566778899aabbccddeeff00112233\n", { mode: 0o600 });
    const svc = await process_({ args: ["--api-key-file", keyFile] });
    expect(svc.apiKey).toBe("e2b_00112233445566778899aabbccddeeff00112233");
    expect(fs.readFileSync(`/proc/${svc.pid}/cmdline`, "utf8")).not.toContain(svc.apiKey);
    expect((await call(svc, "GET", "/v2/sandboxes")).status).toBe(200);
    expect(svc.stderr()).toContain("API key from --api-key-file");
  });

  it("reads the key from E2B_API_KEY", async () => {
    const key = "e2b_ffeeddccbbaa99887766554433221100ffeeddcc";
    const svc = await process_({ env: { E2B_API_KEY: key } });
    expect(svc.apiKey).toBe(key);
    expect(fs.readFileSync(`/proc/${svc.pid}/cmdline`, "utf8")).not.toContain(key);
    expect((await call(svc, "GET", "/v2/sandboxes")).status).toBe(200);
  });
});
