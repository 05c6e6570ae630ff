/**
 * The Provisioner as documented, with the real terraform binary: a bad
 * snapshot name fails the plan before anything exists; setup commands run in
 * the template's WORKDIR (E2B's `commands.run` default); a failed create with
 * `keep_sandbox = true` keeps the sandbox, says its ID and how to look inside,
 * and records nothing, so the next apply does the work.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { fileInSandbox } from "../support/template-files";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform Provisioner checks are",
);

jest.setTimeout(300_000);

const hcl = (command: string, snapshot = "tf-chk-ready") => `${REQUIRED_PROVIDERS}
resource "sandboxiac_template" "wd" {
  name  = "tf-chk"
  build = {
    from_template = "base"
    steps         = [{ workdir = "/tmp" }]
  }
}
resource "sandboxiac_provisioner" "p" {
  template     = sandboxiac_template.wd.ref
  commands     = [{ run = "${command}" }]
  snapshot     = { name = "${snapshot}" }
  keep_sandbox = true
}
`;

describeWithTerraform(`the Provisioner as documented (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture();
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace>;
  let kept: string | undefined;

  async function sandboxIDs(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/sandboxes");
    return (res.body as Array<{ sandboxID: string }>).map((s) => s.sandboxID);
  }

  phase("fails the plan on a bad snapshot name, naming it, before anything exists", async () => {
    ws = tf.workspace(hcl("pwd > /home/user/pwd.txt", "Team/App/Extra"));
    await ws.init();
    const plan = await ws.tf("plan", "-input=false");
    expect(plan.code).toBe(1);
    expect(plan.output).toContain("snapshot.name");
    expect(plan.output).toContain('"my-app-ready"');
    expect(await sandboxIDs()).toEqual([]);
  });

  phase(
    "keeps the sandbox of a failed create, says how to look inside, records nothing",
    async () => {
      ws.write(hcl("pwd > /home/user/pwd.txt; exit 7"));
      const failed = await ws.tf("apply", "-auto-approve", "-input=false");
      expect(failed.code).toBe(1);
      [kept] = await sandboxIDs();
      expect(kept).toBeDefined();
      expect(failed.output).toContain(`sandbox ${kept} was kept for inspection`);
      expect(failed.output).toContain(`e2b sandbox connect ${kept}`);
      expect(await fileInSandbox(tf.svc, kept, "/home/user/pwd.txt")).toBe("/tmp\n");
      expect((await ws.tf("state", "list")).output).not.toContain("sandboxiac_provisioner.p");
    },
  );

  phase("does the work on the next apply, running in the template's WORKDIR", async () => {
    ws.write(hcl("pwd > /home/user/pwd.txt"));
    const applied = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(applied.code).toBe(0);
    const p = ws.resource("sandboxiac_provisioner.p")!;
    expect(p.commands_run).toBe(1);
    expect(await fileInSandbox(tf.svc, p.kept_sandbox_id as string, "/home/user/pwd.txt")).toBe(
      "/tmp\n",
    );
  });

  phase("destroys it once the user killed the sandbox kept for inspection", async () => {
    // The template refuses deletion while a sandbox uses it: kill it, as the message said.
    expect((await tf.svc.call("DELETE", `/sandboxes/${kept!}`)).status).toBe(204);
    expect((await ws.tf("destroy", "-auto-approve", "-input=false")).code).toBe(0);
  });
});
