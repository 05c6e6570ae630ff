/**
 * Dependents follow their template, with the real terraform binary: a changed
 * build step rebuilds the Template, and the plan shows the Provisioner built
 * on its `ref` replaced (`template` forces it) and the Snapshot of the kept
 * sandbox replaced (`sandbox_id` forces it); after apply, sandboxes from both
 * snapshots hold the new build's file. A tags-only change keeps the build, so
 * nothing downstream is planned. A dependent given the plain ID
 * (`template_id`, `kept_sandbox_id`, also inside a function call) is warned
 * about at validate.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { fileInTemplate } from "../support/template-files";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform dependents tests are",
);

jest.setTimeout(300_000);

/** The stack: a template whose one step writes `word`, a Provisioner on its ref, a Snapshot of the kept sandbox. */
const hcl = (word: string, tag = "v1") => `${REQUIRED_PROVIDERS}
resource "sandboxiac_template" "agent" {
  name = "tf-dep"
  tags = ["${tag}"]
  build = {
    from_template = "base"
    steps         = [{ run = ["echo ${word} > /home/user/step.txt"] }]
  }
}
resource "sandboxiac_provisioner" "setup" {
  template     = sandboxiac_template.agent.ref
  commands     = [{ run = "cp /home/user/step.txt /home/user/seen.txt" }]
  snapshot     = { name = "tf-dep-ready" }
  keep_sandbox = true
}
resource "sandboxiac_snapshot" "kept" {
  sandbox_id = sandboxiac_provisioner.setup.kept_sandbox_ref
  name       = "tf-dep-kept"
}
`;

describeWithTerraform(`dependents follow their template (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture();
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace>;

  phase("creates the template, the Provisioner on its ref and the snapshot", async () => {
    ws = tf.workspace(hcl("one"));
    await ws.init();
    const created = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(created.output).toContain("Resources: 3 added");
    expect(created.output).not.toContain("does not follow");
    const template = ws.resource("sandboxiac_template.agent")!;
    expect(template.ref).toBe(`${template.template_id as string}@${template.build_id as string}`);
    expect(ws.resource("sandboxiac_provisioner.setup")!.template).toBe(template.ref);
    expect(await fileInTemplate(tf.svc, "tf-dep-ready", "/home/user/seen.txt")).toBe("one\n");
  });

  phase("plans nothing downstream when only the template's tags change", async () => {
    ws.write(hcl("one", "v2"));
    const plan = await ws.tf("plan", "-input=false");
    expect(plan.output).toContain("sandboxiac_template.agent will be updated in-place");
    expect(plan.output).not.toMatch(/sandboxiac_provisioner\.setup (will|must)/);
    expect(plan.output).not.toMatch(/sandboxiac_snapshot\.kept (will|must)/);
    expect(plan.output).toContain("Plan: 0 to add, 1 to change, 0 to destroy");
    expect((await ws.tf("apply", "-auto-approve", "-input=false")).code).toBe(0);
  });

  phase("plans the Provisioner and the snapshot again when a build step changes", async () => {
    ws.write(hcl("two", "v2"));
    const plan = await ws.tf("plan", "-input=false");
    expect(plan.output).toContain("sandboxiac_template.agent will be updated in-place");
    expect(plan.output).toContain("sandboxiac_provisioner.setup must be replaced");
    expect(plan.output).toMatch(
      /~ template\s+= "[^"]+@[^"]+" -> \(known after apply\) # forces replacement/,
    );
    expect(plan.output).toContain("sandboxiac_snapshot.kept must be replaced");
    expect(plan.output).toMatch(
      /~ sandbox_id\s+= "[^"]+" -> \(known after apply\) # forces replacement/,
    );
  });

  phase(
    "applies it: both snapshots hold the new build's file, and the next plan is clean",
    async () => {
      const applied = await ws.tf("apply", "-auto-approve", "-input=false");
      expect(applied.code).toBe(0);
      expect(applied.output).toContain("Resources: 2 added, 1 changed, 2 destroyed");
      expect(await fileInTemplate(tf.svc, "tf-dep-ready", "/home/user/seen.txt")).toBe("two\n");
      expect(await fileInTemplate(tf.svc, "tf-dep-kept", "/home/user/seen.txt")).toBe("two\n");
      expect((await ws.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
    },
  );

  phase(
    "warns at validate when a dependent takes the plain ID, naming the reference to give",
    async () => {
      ws.write(
        hcl("two", "v2")
          .replace("sandboxiac_template.agent.ref", "sandboxiac_template.agent.template_id")
          // Also seen inside a function call.
          .replace(
            "sandboxiac_provisioner.setup.kept_sandbox_ref",
            "trimspace(sandboxiac_provisioner.setup.kept_sandbox_id)",
          ),
      );
      const validated = await ws.tf("validate", "-no-color");
      expect(validated.code).toBe(0);
      const text = validated.output.replace(/\s+/g, " ");
      expect(text).toContain(
        "template takes sandboxiac_template.agent.template_id, which stays the same across builds: a new build of the Template will not run this Provisioner again; give sandboxiac_template.agent.ref instead",
      );
      expect(text).toContain(
        "sandbox_id takes sandboxiac_provisioner.setup.kept_sandbox_id, which stays the same across runs: a new run of the Provisioner will not retake this Snapshot; give sandboxiac_provisioner.setup.kept_sandbox_ref instead",
      );
      ws.write(hcl("two", "v2"));
    },
  );

  phase("destroys everything", async () => {
    expect((await ws.tf("destroy", "-auto-approve", "-input=false")).code).toBe(0);
  });
});
