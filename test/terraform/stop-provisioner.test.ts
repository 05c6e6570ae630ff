/**
 * Stop means stop for a Provisioner, with the real terraform binary: a SIGINT
 * to terraform's process group (Ctrl-C in a terminal) in the middle of its
 * file upload kills the sandbox it created, and in the middle of a setup
 * command kills that command in the sandbox it works in. Either way nothing
 * is recorded, and the next plan shows the Provisioner still to create. A
 * terraform killed outright (SIGKILL) leaves no provider behind: it stops the
 * command and exits by itself.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import { resolveConfig } from "../../src/config";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { eventually } from "../support/eventually";
import { childrenOf, running } from "../support/procs";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform Provisioner stop tests are",
);

jest.setTimeout(300_000);

/** Enough separate streams (each file is above the 1 MiB of the tar path) to be caught mid-way. */
const FILES = 60;
const FILE_BYTES = 4 * 1024 * 1024;

const uploading = `${REQUIRED_PROVIDERS}
resource "sandboxiac_provisioner" "p" {
  template    = "base"
  files       = [{ source = "big", destination = "/home/user/big" }]
  concurrency = 1
}
`;

const sleeping = (sandboxID: string) => `${REQUIRED_PROVIDERS}
resource "sandboxiac_provisioner" "p" {
  sandbox_id = "${sandboxID}"
  commands   = [{ run = "sleep 300" }]
}
`;

interface Listed {
  sandboxID: string;
  metadata?: Record<string, string>;
}

describeWithTerraform(`Ctrl-C stops a Provisioner's work (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture();
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace>;
  let mine: { sandboxID: string; client: SandboxClient };

  async function sandboxes(): Promise<Listed[]> {
    return (await tf.svc.call("GET", "/sandboxes")).body as Listed[];
  }

  async function clientOf(sandboxID: string): Promise<SandboxClient> {
    const detail = await tf.svc.call("GET", `/sandboxes/${sandboxID}`);
    return createSandboxClient({
      sandboxID,
      accessToken: (detail.body as { envdAccessToken?: string }).envdAccessToken,
      config: resolveConfig({ apiUrl: tf.svc.apiUrl, apiKey: tf.svc.apiKey, env: {} }),
    });
  }

  /**
   * How many processes of the user's sandbox have `sleep 300` as their command
   * line (the command itself, or the process its shell started), read from
   * /proc as a user in the sandbox would.
   */
  async function sleepers(): Promise<number> {
    const listed = await mine.client.run(
      `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done 2>/dev/null | grep -c '^sleep 300 ' || true`,
    );
    return Number(listed.stdout.trim());
  }

  async function expectPlannedCreate(): Promise<void> {
    expect((await ws.tf("state", "list")).output).not.toContain("sandboxiac_provisioner.p");
    const plan = await ws.tf("plan", "-detailed-exitcode", "-input=false");
    expect(plan.code).toBe(2);
    expect(plan.output).toContain("sandboxiac_provisioner.p will be created");
  }

  phase("kills the sandbox it created when terraform is interrupted mid-upload", async () => {
    // GIVEN a Provisioner uploading many large files, one at a time
    ws = tf.workspace(uploading);
    mkdirSync(path.join(ws.dir, "big"));
    for (let i = 0; i < FILES; i++) {
      writeFileSync(path.join(ws.dir, "big", `part-${i}.bin`), Buffer.alloc(FILE_BYTES, i));
    }
    await ws.init();
    const apply = ws.start("apply", "-auto-approve", "-input=false");
    // WHEN Ctrl-C arrives once some files, not all, are in its sandbox
    const sandboxID = await eventually(
      async () =>
        (await sandboxes()).find((s) => s.metadata?.["sandbox-iac"] === "provisioner")?.sandboxID ??
        false,
      { timeoutMs: 120_000 },
    );
    const client = await clientOf(sandboxID);
    await eventually(
      async () => {
        const entries = await client.listDir("/home/user/big").catch(() => []);
        return entries.length > 0 && entries.length < FILES;
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    apply.interrupt();
    const run = await apply.done;
    // THEN terraform stops, the sandbox is gone from the service, and nothing is recorded
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("Interrupt received");
    expect((await sandboxes()).map((s) => s.sandboxID)).not.toContain(sandboxID);
    await expectPlannedCreate();
  });

  phase("kills the setup command in flight when terraform is interrupted", async () => {
    // GIVEN a sandbox of the user's own and a Provisioner whose command takes long in it
    const created = await tf.svc.call("POST", "/sandboxes", {
      templateID: "base",
      timeout: 600,
      secure: true,
    });
    expect(created.status).toBe(201);
    const sandboxID = (created.body as { sandboxID: string }).sandboxID;
    mine = { sandboxID, client: await clientOf(sandboxID) };
    ws.write(sleeping(sandboxID));
    const apply = ws.start("apply", "-auto-approve", "-input=false");
    // WHEN Ctrl-C arrives while `sleep 300` runs in it
    await eventually(async () => (await sleepers()) > 0, { timeoutMs: 120_000 });
    apply.interrupt();
    const run = await apply.done;
    // THEN terraform stops, the command is gone, the user's sandbox still runs, nothing is recorded
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("Interrupt received");
    expect(await sleepers()).toBe(0);
    expect((await sandboxes()).map((s) => s.sandboxID)).toContain(sandboxID);
    await expectPlannedCreate();
  });

  phase("stops the command and exits by itself when terraform is killed (SIGKILL)", async () => {
    // GIVEN the Provisioner's `sleep 300` running in the user's sandbox again
    const apply = ws.start("apply", "-auto-approve", "-input=false");
    await eventually(async () => (await sleepers()) > 0, { timeoutMs: 120_000 });
    const providers = childrenOf(apply.pid);
    expect(providers.length).toBeGreaterThan(0);
    // WHEN terraform itself is killed outright: no Ctrl-C, no StopProvider, no Shutdown
    apply.kill();
    expect((await apply.done).code).toBeNull();
    // THEN its provider stops the command and exits on its own; the user's sandbox still runs
    await eventually(() => providers.every((pid) => !running(pid)), { timeoutMs: 60_000 });
    expect(await sleepers()).toBe(0);
    expect((await sandboxes()).map((s) => s.sandboxID)).toContain(mine.sandboxID);
    await expectPlannedCreate();
  });

  phase("leaves the user's sandbox to the user", async () => {
    expect((await tf.svc.call("DELETE", `/sandboxes/${mine.sandboxID}`)).status).toBe(204);
  });
});
