/**
 * Scenarios with the real terraform binary against the local service: the
 * example stack end to end, in-place update, replace, out-of-band deletion,
 * import, a failed apply, validation errors, and the API key kept out of
 * state and output. Skipped (and said so) where terraform is not on PATH.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { providerSchemaJson } from "../../src/terraform/schema/schema-json";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { volumeFile } from "../pulumi/support";
import { phases } from "../support/phases";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform scenario tests are",
);

// Sized to the work, as the other Terraform files are: each test runs several
// terraform commands (init, applies with sandboxes and builds, destroy), which
// can take longer than the 120 s default on a loaded machine.
jest.setTimeout(300_000);

const EXAMPLE = path.resolve(__dirname, "..", "..", "examples", "terraform-basic", "main.tf");

const PROVIDER = `${REQUIRED_PROVIDERS}variable "api_key" {
  type      = string
  sensitive = true
}
provider "sandboxiac" {
  api_key = var.api_key
}
`;

describeWithTerraform(`terraform scenarios (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture();
  const { workspace } = tf;

  async function templateNames(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/templates");
    return (res.body as Array<{ names: string[] }>).flatMap((t) => t.names);
  }

  /** Snapshot names without their tag. */
  async function snapshotNames(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/snapshots");
    return (res.body as Array<{ names: string[] }>).flatMap((t) =>
      t.names.map((n) => n.split(":")[0]),
    );
  }

  async function tagsOf(templateID: string): Promise<string[]> {
    const res = await tf.svc.call("GET", `/templates/${templateID}/tags`);
    return (res.body as Array<{ tag: string }>).map((t) => t.tag);
  }

  async function sandboxIDs(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/sandboxes");
    return (res.body as Array<{ sandboxID: string }>).map((s) => s.sandboxID);
  }

  async function volumeNames(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/volumes");
    return (res.body as Array<{ name: string }>).map((v) => v.name);
  }

  it("applies the example as written, plans no changes, and destroys everything", async () => {
    const ws = workspace(readFileSync(EXAMPLE, "utf8"));
    expect((await ws.init()).output).toContain("Installed sandbox-iac/sandboxiac");
    const apply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(apply.output).toContain("Apply complete! Resources: 6 added");
    expect(apply.code).toBe(0);
    const templateID = ws.resource("sandboxiac_template.tools")!.template_id as string;
    expect(apply.output).toContain(`template_id = "${templateID}"`);
    expect(apply.output).toContain('state = "running"');
    expect(await templateNames()).toContain("tf-tools");
    expect(await tagsOf(templateID)).toContain("v1");
    expect(await snapshotNames()).toEqual(
      expect.arrayContaining(["tf-tools-ready", "tf-tools-again"]),
    );
    const kept = ws.resource("sandboxiac_provisioner.setup")!.kept_sandbox_id as string;
    expect(await sandboxIDs()).toEqual([kept]);

    // The volume holds its seed file and what the writer's sandbox wrote; the reader's
    // sandbox, created after the writer's, found that file (its grep fails the apply otherwise).
    const volumeID = ws.resource("sandboxiac_volume.workspace")!.volume_id as string;
    expect(apply.output).toContain(`volume_id = "${volumeID}"`);
    expect(await volumeFile(tf.svc, volumeID, "/settings.json")).toBe(
      readFileSync(path.join(path.dirname(EXAMPLE), "files", "config", "settings.json"), "utf8"),
    );
    expect(await volumeFile(tf.svc, volumeID, "/note.txt")).toBe("written by the writer\n");
    expect(ws.resource("sandboxiac_provisioner.writer")).toMatchObject({ commands_run: 1 });
    const reader = ws.resource("sandboxiac_provisioner.reader")!;
    expect(reader).toMatchObject({ commands_run: 1 });
    expect(reader.triggers).toEqual({ written: ws.resource("sandboxiac_provisioner.writer")!.id });

    const plan = await ws.tf("plan", "-detailed-exitcode", "-input=false");
    expect(plan.output).toContain("No changes.");
    expect(plan.code).toBe(0);

    const destroy = await ws.tf("destroy", "-auto-approve", "-input=false");
    expect(destroy.output).toContain("Destroy complete! Resources: 6 destroyed.");
    expect(await volumeNames()).toEqual([]);
    expect((await templateNames()).filter((n) => n.startsWith("tf-tools"))).toEqual([]);
    expect((await snapshotNames()).filter((n) => n.startsWith("tf-tools"))).toEqual([]);
    expect(await sandboxIDs()).not.toContain(kept);
    expect(ws.stateText()).not.toContain(tf.svc.apiKey);
  });

  describe("updates in place, replaces, re-creates what was deleted out of band, and imports by id", () => {
    const phase = phases();
    const hcl = (tag: string, snapshot: string) => `${PROVIDER}
resource "sandboxiac_template" "t" {
  name = "tf-scn"
  tags = ["${tag}"]
  build = {
    from_template = "base"
    steps         = [{ copy = { src = "files/app", dest = "/opt/app" } }]
  }
}
resource "sandboxiac_provisioner" "p" {
  template     = sandboxiac_template.t.template_id
  commands     = [{ run = "echo ready > /tmp/ready" }]
  keep_sandbox = true
}
resource "sandboxiac_sandbox_reader" "r" {
  sandbox_id = sandboxiac_provisioner.p.kept_sandbox_id
}
resource "sandboxiac_snapshot" "s" {
  sandbox_id = sandboxiac_provisioner.p.kept_sandbox_id
  name       = "${snapshot}"
}
`;
    let ws: ReturnType<typeof workspace> | undefined;
    let templateID: string;

    phase(
      "creates a template, a kept sandbox, its reader and a snapshot, and plans clean",
      async () => {
        // The key reaches the provider through a sensitive variable only.
        ws = workspace(hcl("v1", "tf-scn-snap"), {
          E2B_API_KEY: "",
          TF_VAR_api_key: tf.svc.apiKey,
        });
        await ws.init();
        const created = await ws.tf("apply", "-auto-approve", "-input=false");
        expect(created.output).toContain("Resources: 4 added");
        expect(ws.resource("sandboxiac_sandbox_reader.r")!.state).toBe("running");
        expect((await ws.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
      },
    );

    phase("re-assigns new tags to the same template in place", async () => {
      // In place: new tags are re-assigned to the same template.
      ws!.write(hcl("v2", "tf-scn-snap"));
      const update = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(update.output).toContain("sandboxiac_template.t will be updated in-place");
      expect(update.output).toContain("Resources: 0 added, 1 changed, 0 destroyed");
      templateID = ws!.resource("sandboxiac_template.t")!.template_id as string;
      expect(await tagsOf(templateID)).toContain("v2");
    });

    phase("removes a tag added behind Terraform's back", async () => {
      // Drift: a tag added behind Terraform's back shows in the plan and is removed by apply.
      await tf.svc.call("POST", "/templates/tags", { target: "tf-scn:v2", tags: ["rogue"] });
      expect(await tagsOf(templateID)).toContain("rogue");
      const tagDrift = await ws!.tf("plan", "-detailed-exitcode", "-input=false");
      expect(tagDrift.code).toBe(2);
      expect(tagDrift.output).toContain("sandboxiac_template.t will be updated in-place");
      await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(await tagsOf(templateID)).not.toContain("rogue");
      expect(await tagsOf(templateID)).toContain("v2");
      expect((await ws!.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
    });

    phase(
      "rebuilds with exactly the content hash the plan showed when a local file changes",
      async () => {
        // A changed local file: the new content hash is in the plan, and apply produces exactly it.
        writeFileSync(path.join(ws!.dir, "files", "app", "hello.sh"), "#!/bin/sh\necho changed\n");
        const edited = await ws!.tf("plan", "-input=false");
        expect(edited.output).toContain("sandboxiac_template.t will be updated in-place");
        const hashLine = /files_hashes = \[\s*~ "([0-9a-f]{64})" -> "([0-9a-f]{64})",/.exec(
          edited.output,
        );
        expect(hashLine).not.toBeNull();
        const rebuilt = await ws!.tf("apply", "-auto-approve", "-input=false");
        expect(rebuilt.code).toBe(0);
        expect(ws!.resource("sandboxiac_template.t")!.files_hashes).toEqual([hashLine![2]]);
        expect((await ws!.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
      },
    );

    phase("replaces the snapshot when its name changes and deletes the old one", async () => {
      // Replace: a new snapshot name is a new snapshot; the old one is deleted.
      ws!.write(hcl("v2", "tf-scn-snap2"));
      const replace = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(replace.output).toContain("sandboxiac_snapshot.s must be replaced");
      expect(replace.output).toContain("# forces replacement");
      const names = await snapshotNames();
      expect(names).toContain("tf-scn-snap2");
      expect(names).not.toContain("tf-scn-snap");
    });

    phase("re-creates a snapshot deleted out of band", async () => {
      // Out of band: deleted behind Terraform's back, shown by plan, re-created by apply.
      const snapshotID = ws!.resource("sandboxiac_snapshot.s")!.snapshot_id as string;
      expect((await tf.svc.call("DELETE", `/templates/${snapshotID}`)).status).toBeLessThan(300);
      const drift = await ws!.tf("plan", "-detailed-exitcode", "-input=false");
      expect(drift.code).toBe(2);
      expect(drift.output).toContain("sandboxiac_snapshot.s will be created");
      expect((await ws!.tf("apply", "-auto-approve", "-input=false")).output).toContain(
        "Resources: 1 added, 0 changed, 0 destroyed",
      );
      expect(await snapshotNames()).toContain("tf-scn-snap2");
    });

    phase("imports the template back by id", async () => {
      // Import by id: forget the template, import it, and its id and outputs come back.
      await ws!.tf("state", "rm", "sandboxiac_template.t");
      const imported = await ws!.tf("import", "-input=false", "sandboxiac_template.t", templateID);
      expect(imported.output).toContain("Import successful!");
      expect(ws!.resource("sandboxiac_template.t")).toMatchObject({
        id: templateID,
        template_id: templateID,
        name: "tf-scn",
      });
    });

    phase("keeps the key out of state and output, and destroys everything", async () => {
      // The key is in neither the state nor anything terraform printed.
      expect(ws!.stateText()).not.toContain(tf.svc.apiKey);
      for (const out of ws!.outputs) expect(out).not.toContain(tf.svc.apiKey);

      const destroy = await ws!.tf("destroy", "-auto-approve", "-input=false");
      expect(destroy.code).toBe(0);
      expect((await templateNames()).filter((n) => n.startsWith("tf-scn"))).toEqual([]);
      expect((await snapshotNames()).filter((n) => n.startsWith("tf-scn"))).toEqual([]);
    });
  });

  it("leaves nothing behind when an apply fails, and shows the build log's tail", async () => {
    const ws = workspace(`
${REQUIRED_PROVIDERS}resource "sandboxiac_template" "broken" {
  name = "tf-broken"
  build = {
    from_template = "base"
    steps         = [{ run = ["echo about to fail", "exit 3"] }]
  }
}
`);
    await ws.init();
    const apply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(apply.code).toBe(1);
    expect(apply.output).toContain("sandboxiac_template create failed");
    expect(apply.output).toContain("about to fail");
    expect((await ws.tf("state", "list")).output.trim()).toBe("");
    expect((await templateNames()).filter((n) => n.startsWith("tf-broken"))).toEqual([]);
  });

  it("serves the schema providerSchemaJson() describes, as `terraform providers schema -json` prints it", async () => {
    const ws = workspace(PROVIDER);
    await ws.init();
    const res = await ws.tf("providers", "schema", "-json");
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.output.slice(res.output.indexOf("{"))) as unknown;
    expect(printed).toEqual(providerSchemaJson());
  });

  it("terraform validate lists every error with its attribute path", async () => {
    const ws = workspace(`
${REQUIRED_PROVIDERS}resource "sandboxiac_template" "bad" {
  name      = "Not A Name!"
  cpu_count = 0
  build = {
    from_template = "base"
    steps         = [{ workdir = "/app", env = { "1BAD" = "x" } }]
  }
}
`);
    await ws.init();
    const res = await ws.tf("validate");
    expect(res.code).toBe(1);
    expect(res.output).toContain("Error: Invalid name");
    expect(res.output).toContain("Error: Invalid cpu_count");
    expect(res.output).toMatch(/Error: Invalid build\.steps\[0\]/);
    expect(res.output).toContain("got 0");
    // Each error points at its line in the configuration.
    expect(res.output).toContain('name      = "Not A Name!"');
    expect(res.output).toContain("cpu_count = 0");
  });

  it("terraform validate refuses an unknown argument, naming the nearest known one", async () => {
    const ws = workspace(`
${REQUIRED_PROVIDERS}resource "sandboxiac_provisioner" "bad" {
  template = "base"
  comands  = [{ run = "true" }]
}
`);
    await ws.init();
    const res = await ws.tf("validate");
    expect(res.code).toBe(1);
    // Terraform checks the arguments against the provider's schema itself.
    expect(res.output).toContain("Unsupported argument");
    expect(res.output).toContain('Did you mean "commands"?');
  });
});
