/**
 * The Provisioner lifecycle without Pulumi: `create` / `read` / `update` /
 * `delete` called directly against the real local service.
 */
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { SandboxIacError } from "../../src/errors";
import { provisionerLifecycle, type ProvisionerArgs } from "../../src/resources/provisioner";
import { provisionerFixture } from "./support";

jest.setTimeout(180_000);

const fx = provisionerFixture("prov-lifecycle-files-");
const { context, ownSandbox, clientOf } = fx;

function checked(raw: unknown): ProvisionerArgs {
  const result = provisionerLifecycle.check(raw);
  expect(result.failures).toEqual([]);
  return result.inputs!;
}

async function stateOf(sandboxID: string): Promise<string> {
  try {
    return (await fx.control.getSandbox(sandboxID)).state;
  } catch (err) {
    if (SandboxIacError.hasCode(err, "not_found")) return "gone";
    throw err;
  }
}

function localTree(name: string, files: Record<string, string>): string {
  const root = path.join(fx.work, name);
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
    const diff = await provisionerLifecycle.diff(created.outputs, inputs, { baseDir: fx.work });
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
    fx.ownSandboxes.push(kept);
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
    fx.ownSandboxes.push(sandboxID);
    expect(err.message).toContain(sandboxID);
    expect(await stateOf(sandboxID)).toBe("gone");
    expect(await fx.control.listSandboxes({ metadata: marker })).toEqual([]);
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
    fx.ownSandboxes.push(kept);

    expect(await provisionerLifecycle.read(created.id, created.outputs, ctx)).toEqual({
      id: kept,
      outputs: created.outputs,
    });

    await fx.control.killSandbox(kept);
    expect(await provisionerLifecycle.read(created.id, created.outputs, ctx)).toBeUndefined();
    // Deleting what is already gone succeeds.
    await provisionerLifecycle.delete(created.id, created.outputs, ctx);
  });
});
