/**
 * Stop means stop, with the real terraform binary: a SIGINT to terraform's
 * process group (Ctrl-C in a terminal) in the middle of a template rebuild,
 * or of the upload of its COPY files, makes terraform call StopProvider; the
 * provider cancels the build on the service, so it never becomes the
 * template's build behind the state's back. The next plan shows the truth:
 * the rebuild is still to do.
 */
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readdirSync, writeSync } from "node:fs";
import * as path from "node:path";
import { TEMPLATE_FILES_DIR } from "../../src/local/control/templates/constants";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { eventually } from "../support/eventually";

const { version, describe: describeWithTerraform } = terraformSuite("the Terraform stop tests are");

jest.setTimeout(300_000);

const hcl = (steps: string) => `${REQUIRED_PROVIDERS}
resource "sandboxiac_template" "slow" {
  name  = "tf-stop"
  build = {
    from_template = "base"
    steps         = [${steps}]
  }
}
`;

/** Random (so gzip keeps its size) and large enough that its upload can be caught mid-way. */
const BIG_FILE_BYTES = 96 * 1024 * 1024;

function writeRandomFile(file: string, bytes: number): void {
  const fd = openSync(file, "w");
  try {
    for (let left = bytes; left > 0; left -= 16 * 1024 * 1024)
      writeSync(fd, randomBytes(Math.min(left, 16 * 1024 * 1024)));
  } finally {
    closeSync(fd);
  }
}

interface Build {
  buildID: string;
  status: string;
}

describeWithTerraform(`Ctrl-C stops the service's work (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture();
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace>;
  let templateID: string;
  let firstBuild: string;

  async function builds(): Promise<Build[]> {
    const res = await tf.svc.call("GET", `/templates/${templateID}`);
    return (res.body as { builds: Build[] }).builds;
  }

  async function tags(): Promise<Array<{ tag: string; buildID: string }>> {
    return (await tf.svc.call("GET", `/templates/${templateID}/tags`)).body as Array<{
      tag: string;
      buildID: string;
    }>;
  }

  phase("builds the template once", async () => {
    ws = tf.workspace(hcl(`{ run = ["echo one > /home/user/step.txt"] }`));
    await ws.init();
    expect((await ws.tf("apply", "-auto-approve", "-input=false")).code).toBe(0);
    templateID = ws.resource("sandboxiac_template.slow")!.template_id as string;
    firstBuild = ws.resource("sandboxiac_template.slow")!.build_id as string;
  });

  phase("cancels the rebuild on the service when terraform is interrupted mid-build", async () => {
    // GIVEN a rebuild whose second step takes long
    ws.write(hcl(`{ run = ["echo two > /home/user/step.txt"] }, { run = ["sleep 120"] }`));
    const apply = ws.start("apply", "-auto-approve", "-input=false");
    // WHEN Ctrl-C arrives while the service is building it
    const rebuild = await eventually(
      async () =>
        (await builds()).find((b) => b.buildID !== firstBuild && b.status === "building") ?? false,
      { timeoutMs: 120_000 },
    );
    apply.interrupt();
    const run = await apply.done;
    // THEN terraform stops, the build is cancelled on the service, the state keeps the first build
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("Interrupt received");
    const ended = await eventually(
      async () =>
        (await builds()).find((b) => b.buildID === rebuild.buildID && b.status !== "building") ??
        false,
      // The provider's cancel returns once the service recorded the build's end, so this holds
      // when terraform exits; the bound covers a loaded 2-core machine, far below the `sleep 120`.
      { timeoutMs: 90_000 },
    );
    expect(ended.status).toBe("error");
    const status = await tf.svc.call(
      "GET",
      `/templates/${templateID}/builds/${rebuild.buildID}/status`,
    );
    expect((status.body as { reason?: { message: string } }).reason?.message).toContain(
      "the build was cancelled",
    );
    expect(ws.resource("sandboxiac_template.slow")!.build_id).toBe(firstBuild);
    expect((await tags()).find((t) => t.tag === "default")?.buildID).toBe(firstBuild);
  });

  phase("plans the rebuild again: the plan shows the truth", async () => {
    const plan = await ws.tf("plan", "-detailed-exitcode", "-input=false");
    expect(plan.code).toBe(2);
    expect(plan.output).toContain("sandboxiac_template.slow will be updated in-place");
    expect(plan.output).toMatch(
      new RegExp(`build_id\\s+= "${firstBuild}" -> \\(known after apply\\)`),
    );
  });

  phase("cancels the rebuild on the service when terraform is interrupted mid-upload", async () => {
    // GIVEN a rebuild that COPYs a large file
    writeRandomFile(path.join(ws.dir, "big.bin"), BIG_FILE_BYTES);
    ws.write(
      hcl(`{ copy = { src = "big.bin", dest = "/home/user/big.bin" } }, { run = ["echo three"] }`),
    );
    const before = new Set((await builds()).map((b) => b.buildID));
    const apply = ws.start("apply", "-auto-approve", "-input=false");
    // WHEN Ctrl-C arrives while the service is receiving the file (its partial archive on disk)
    const store = path.join(tf.svc.dataDir, TEMPLATE_FILES_DIR);
    await eventually(() => readdirSync(store).some((name) => name.includes(".partial-")), {
      timeoutMs: 180_000,
      intervalMs: 20,
    });
    apply.interrupt();
    const run = await apply.done;
    // THEN the new build ended cancelled without having started, the state keeps the first build
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("Interrupt received");
    const cancelled = (await builds()).find((b) => !before.has(b.buildID));
    expect(cancelled?.status).toBe("error");
    const status = await tf.svc.call(
      "GET",
      `/templates/${templateID}/builds/${cancelled!.buildID}/status`,
    );
    const body = status.body as {
      reason?: { message: string };
      logEntries: Array<{ message: string }>;
    };
    expect(body.reason?.message).toContain("the build was cancelled");
    expect(body.logEntries.map((e) => e.message).join("\n")).not.toContain("Building");
    expect(readdirSync(store).filter((name) => name.includes(".partial-"))).toEqual([]);
    expect(ws.resource("sandboxiac_template.slow")!.build_id).toBe(firstBuild);
    expect((await tags()).find((t) => t.tag === "default")?.buildID).toBe(firstBuild);
    // AND the next plan still has the rebuild to do
    const plan = await ws.tf("plan", "-detailed-exitcode", "-input=false");
    expect(plan.code).toBe(2);
    expect(plan.output).toMatch(
      new RegExp(`build_id\\s+= "${firstBuild}" -> \\(known after apply\\)`),
    );
  });

  phase("destroys it", async () => {
    expect((await ws.tf("destroy", "-auto-approve", "-input=false")).code).toBe(0);
  });
});
