/**
 * The Provisioner lifecycle without Pulumi: `create` / `read` / `update` /
 * `delete` called directly against the real local service.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { resolveConfig } from "../../src/config";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import { SandboxIacError } from "../../src/errors";
import { startService, type TestService } from "../support/service";
import type { ResourceContext } from "../../src/resources/core/lifecycle";
import { provisionerLifecycle, type ProvisionerArgs } from "../../src/resources/provisioner";

jest.setTimeout(180_000);

let service: TestService;
let work: string;
let control: ControlClient;
/** Sandboxes a test created itself; killed after each test whatever happened. */
const ownSandboxes: string[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "prov-lifecycle-files-"));
  service = await startService();
  control = createControlClient({ config: config(), log: () => undefined });
});

afterEach(async () => {
  for (const id of ownSandboxes.splice(0)) await killIfRunning(id);
});

afterAll(async () => {
  await service?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function config() {
  return resolveConfig({
    apiUrl: service.apiUrl,
    apiKey: service.apiKey,
    sandboxUrl: service.sandboxUrl,
    env: {},
  });
}

/** A context whose log lines are collected; `onLine` sees each as it arrives. */
function context(onLine?: (line: string) => void): { ctx: ResourceContext; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    ctx: {
      config: config(),
      baseDir: work,
      log: (line) => {
        lines.push(line);
        onLine?.(line);
      },
    },
  };
}

function checked(raw: unknown): ProvisionerArgs {
  const result = provisionerLifecycle.check(raw);
  expect(result.failures).toEqual([]);
  return result.inputs!;
}

async function killIfRunning(id: string): Promise<void> {
  try {
    await control.killSandbox(id);
  } catch (err) {
    if (!SandboxIacError.hasCode(err, "not_found")) throw err;
  }
}

/** A running secure sandbox created by the test, with its client. */
async function ownSandbox(): Promise<SandboxClient> {
  const created = await control.createSandbox({ templateID: "base", timeout: 600, secure: true });
  ownSandboxes.push(created.sandboxID);
  return createSandboxClient({
    sandboxID: created.sandboxID,
    accessToken: created.envdAccessToken ?? undefined,
    config: config(),
  });
}

/** A client of a sandbox the Provisioner created (the token comes from the control API). */
async function clientOf(sandboxID: string): Promise<SandboxClient> {
  const detail = await control.getSandbox(sandboxID);
  return createSandboxClient({
    sandboxID,
    accessToken: detail.envdAccessToken ?? undefined,
    config: config(),
  });
}

async function stateOf(sandboxID: string): Promise<string> {
  try {
    return (await control.getSandbox(sandboxID)).state;
  } catch (err) {
    if (SandboxIacError.hasCode(err, "not_found")) return "gone";
    throw err;
  }
}

function localTree(name: string, files: Record<string, string>): string {
  const root = path.join(work, name);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  return root;
}

describe("Provisioner lifecycle against the local service", () => {
  it("works in an existing sandbox: an update uploads only changed files, removes undeclared ones, and delete never kills it", async () => {
    // GIVEN a running sandbox and a local tree of three files
    const sandbox = await ownSandbox();
    const root = localTree("existing", {
      "a.txt": "alpha\n",
      "b.txt": "bravo\n",
      "sub/c.txt": "charlie\n",
    });
    const inputs = checked({
      sandboxID: sandbox.sandboxID,
      files: [{ source: root, destination: "/home/user/proj" }],
      commands: [{ run: "cat /home/user/proj/a.txt >> /home/user/runs.log" }],
    });
    const { ctx } = context();

    // WHEN created THEN every file is there and the resource is the sandbox itself
    const created = await provisionerLifecycle.create(inputs, ctx);
    expect(created.id).toBe(sandbox.sandboxID);
    expect(created.outputs.keptSandboxID).toBeUndefined();
    expect(created.outputs.bytesUploaded).toBe(
      "alpha\n".length + "bravo\n".length + "charlie\n".length,
    );
    expect(created.outputs.commandsRun).toBe(1);
    expect(await sandbox.readText("/home/user/proj/sub/c.txt")).toBe("charlie\n");

    // WHEN one file is edited and one is deleted locally (and an unchanged one is
    // altered inside the sandbox: still altered afterwards means it was not sent again)
    await sandbox.uploadBytes("/home/user/proj/sub/c.txt", "changed in the sandbox\n");
    writeFileSync(path.join(root, "a.txt"), "alpha, edited\n");
    unlinkSync(path.join(root, "b.txt"));
    const diff = await provisionerLifecycle.diff(created.outputs, inputs, { baseDir: work });
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    expect(diff.updates).toContain("files");
    const updated = await provisionerLifecycle.update(created.id, created.outputs, inputs, ctx);

    // THEN only the edited file went up, the undeclared one is gone, the commands ran again
    expect(updated.bytesUploaded).toBe("alpha, edited\n".length);
    expect(await sandbox.readText("/home/user/proj/a.txt")).toBe("alpha, edited\n");
    expect(await sandbox.readText("/home/user/proj/sub/c.txt")).toBe("changed in the sandbox\n");
    expect(await sandbox.exists("/home/user/proj/b.txt")).toBe(false);
    const names = (await sandbox.listDir("/home/user/proj")).map((e) => e.name).sort();
    expect(names).toEqual(["a.txt", "sub"]);
    expect(await sandbox.readText("/home/user/runs.log")).toBe("alpha\nalpha, edited\n");
    expect(Object.keys(updated.fileDigest).sort()).toEqual([
      "/home/user/proj/a.txt",
      "/home/user/proj/sub/c.txt",
    ]);

    // WHEN deleted THEN the sandbox, not the Provisioner's, keeps running
    await provisionerLifecycle.delete(created.id, updated, ctx);
    expect(await stateOf(sandbox.sandboxID)).toBe("running");
  });

  it("runs a cmd with args unsplit, in cwd, with envs, as root", async () => {
    const inputs = checked({
      template: "base",
      keepSandbox: true,
      commands: [
        {
          cmd: "/bin/sh",
          args: [
            "-c",
            'printf "%s|%s|%s|%s\\n" "$(id -un)" "$PWD" "$GREETING" "$1" > /root/who.txt',
            "sh",
            "two words",
          ],
          cwd: "/opt",
          envs: { GREETING: "hello there" },
          user: "root",
        },
      ],
    });
    const created = await provisionerLifecycle.create(inputs, context().ctx);
    const kept = created.outputs.keptSandboxID!;
    ownSandboxes.push(kept);
    expect(created.id).toBe(kept);

    const sandbox = await clientOf(kept);
    // /root is 0700: only a command that really ran as root could write there.
    expect(await sandbox.readText("/root/who.txt", { user: "root" })).toBe(
      "root|/opt|hello there|two words\n",
    );
  });

  it("fails when a command outlives timeoutSeconds, and kills the sandbox it created", async () => {
    const marker = { "prov-test": "timeout" };
    const inputs = checked({
      template: "base",
      metadata: marker,
      commands: [{ run: "sleep 30", timeoutSeconds: 1 }],
    });
    const { ctx, lines } = context();

    const failure = await provisionerLifecycle.create(inputs, ctx).then(
      () => undefined,
      (err: unknown) => err,
    );

    expect(SandboxIacError.is(failure)).toBe(true);
    const err = failure as SandboxIacError;
    expect(err.code).toBe("timeout");
    // The user must learn which command and which input to change.
    expect(err.message).toContain('"sleep 30"');
    expect(err.message).toContain("timeoutSeconds");
    const createdLine = lines.find((l) => l.startsWith("created sandbox "));
    expect(createdLine).toBeDefined();
    const sandboxID = createdLine!.split(" ")[2];
    ownSandboxes.push(sandboxID);
    expect(err.message).toContain(sandboxID);
    expect(await stateOf(sandboxID)).toBe("gone");
    expect(await control.listSandboxes({ metadata: marker })).toEqual([]);
  });

  it("streams each output line to the log, prefixed, while the command still runs", async () => {
    // The command waits for a file the test writes only once the first line
    // reached the log: without streaming it would time out instead.
    const sandbox = await ownSandbox();
    let released: Promise<unknown> | undefined;
    const { ctx, lines } = context((line) => {
      if (line === "  | first" && !released) released = sandbox.uploadBytes("/tmp/go", "go");
    });
    const inputs = checked({
      sandboxID: sandbox.sandboxID,
      commands: [
        {
          run: "echo first; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo second >&2; printf third",
          timeoutSeconds: 60,
        },
      ],
    });

    await provisionerLifecycle.create(inputs, ctx);
    await released;

    const shown = lines.filter((l) => l.startsWith("[1/1]") || l.startsWith("  "));
    expect(shown).toEqual([
      "[1/1] $ echo first; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo second >&2; printf third",
      "  | first",
      "  ! second",
      "  | third",
    ]);
  });

  it("reads a kept sandbox while it runs, and reads undefined once it is killed", async () => {
    const inputs = checked({ template: "base", keepSandbox: true, commands: [{ run: "true" }] });
    const { ctx } = context();
    const created = await provisionerLifecycle.create(inputs, ctx);
    const kept = created.outputs.keptSandboxID!;
    ownSandboxes.push(kept);

    expect(await provisionerLifecycle.read(created.id, created.outputs, ctx)).toEqual({
      id: kept,
      outputs: created.outputs,
    });

    await control.killSandbox(kept);
    expect(await provisionerLifecycle.read(created.id, created.outputs, ctx)).toBeUndefined();
    // Deleting what is already gone succeeds.
    await provisionerLifecycle.delete(created.id, created.outputs, ctx);
  });
});
