/**
 * `run` as a string or a list, with the real terraform. A Provisioner command's
 * `run` is a dynamic attribute: a shell line or a list of lines (joined with
 * " && ", the SDK's runCmd rule), one form per `commands` list, since
 * terraform converts a list of objects to one element type. A Template step's
 * `run` takes the list form in HCL: terraform refuses a dynamic attribute's
 * list form beside steps without it (a COPY step). Rewriting a `run` in the
 * other form with the same meaning rebuilds and re-runs nothing, and any other
 * type is refused at validate, naming the attribute and what it allows.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import type { Workspace } from "./workspace";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform run-form tests are",
);

jest.setTimeout(300_000);

/** The configuration, with each `run` written as `forms` says. */
function config(forms: { step: string; listed: string; lines: string }): string {
  return `${REQUIRED_PROVIDERS}resource "sandboxiac_template" "t" {
  name  = "tf-run-forms"
  build = {
    from_template = "base"
    steps = [
      { run = ["echo one > /tmp/one.txt"] },
      { workdir = "/tmp" },
      { run = ${forms.step} },
    ]
  }
}
resource "sandboxiac_provisioner" "listed" {
  template = sandboxiac_template.t.ref
  commands = ${forms.listed}
}
resource "sandboxiac_provisioner" "lines" {
  template = sandboxiac_template.t.ref
  commands = ${forms.lines}
}
`;
}

const WRITTEN = {
  step: `["echo two > two.txt", "echo three >> two.txt"]`,
  listed: `[{ run = ["cat /tmp/one.txt"] }, { run = ["cat /tmp/two.txt", "echo listed-ran"] }]`,
  lines: `[{ run = "echo lines-ran" }]`,
};

/** The same commands, each in the other form. */
const REWRITTEN = {
  step: `["echo two > two.txt && echo three >> two.txt"]`,
  listed: `[{ run = "cat /tmp/one.txt" }, { run = "cat /tmp/two.txt && echo listed-ran" }]`,
  lines: `[{ run = ["echo lines-ran"] }]`,
};

describeWithTerraform(`terraform: run as a string or a list (${version ?? "no terraform"})`, () => {
  let ws: Workspace | undefined;
  const tf = terraformFixture({
    beforeClose: async () => {
      await ws?.tf("destroy", "-auto-approve", "-input=false");
    },
  });

  it("runs both forms, a list joined with &&, and a rewrite in the other form rebuilds and re-runs nothing", async () => {
    ws = tf.workspace(config(WRITTEN), { TF_LOG_PROVIDER: "INFO" });
    expect((await ws.init()).code).toBe(0);
    const apply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(apply.code).toBe(0);
    // A list ran as one && line, in the build and in the sandbox.
    expect(apply.output).toContain("RUN echo two > two.txt && echo three >> two.txt");
    expect(apply.output).toContain("$ cat /tmp/two.txt && echo listed-ran");
    for (const printed of ["one", "two", "three", "listed-ran", "lines-ran"])
      expect(apply.output).toMatch(new RegExp(`\\| ${printed}$`, "m"));
    const built = ws.resource("sandboxiac_template.t");

    // WHEN every run is rewritten in the other form with the same meaning
    ws.write(config(REWRITTEN));
    const plan = await ws.tf("plan", "-input=false");
    expect(plan.code).toBe(0);
    // THEN terraform records the new form, and nothing is rebuilt or re-run
    expect(plan.output).not.toContain("known after apply");
    expect(plan.output).not.toContain("must be replaced");
    const reapply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(reapply.code).toBe(0);
    expect(reapply.output).not.toContain("building template");
    expect(reapply.output).not.toContain("$ cat /tmp/one.txt");
    expect(reapply.output).not.toContain("$ echo lines-ran");
    expect(ws.resource("sandboxiac_template.t")?.build_id).toBe(built?.build_id);
    // And a plan after that is clean (the stored forms match the configuration).
    const after = await ws.tf("plan", "-input=false", "-detailed-exitcode");
    expect(after.output).toContain("No changes.");
    expect(after.code).toBe(0);
  });

  it("validate refuses a number or an object as a command's run, naming the attribute and what it allows", async () => {
    const bad = tf.workspace(
      config({ ...WRITTEN, listed: `[{ run = 42 }]`, lines: `[{ run = { line = "echo hi" } }]` }),
    );
    expect((await bad.init()).code).toBe(0);
    const { code, output } = await bad.tf("validate");
    expect(code).not.toBe(0);
    const text = output.replace(/\s+/g, " ");
    expect(text).toContain(
      'commands[0].run must be a shell line ("apt-get update") or a non-empty list of shell lines (["apt-get update", "apt-get install -y git"], run as one line joined with " && "), got 42',
    );
    expect(text).toMatch(/commands\[0\]\.run must be a shell line .*, got \{/);
    expect(text).toContain("with sandboxiac_provisioner.listed");
    expect(text).toContain("with sandboxiac_provisioner.lines");
  });

  it("terraform itself refuses both forms in one commands list, and a line as a template step's run", async () => {
    // Terraform converts a list of objects to one element type before the provider sees it.
    const mixed = tf.workspace(
      config({ ...WRITTEN, listed: `[{ run = "echo a" }, { run = ["echo b", "echo c"] }]` }),
    );
    expect((await mixed.init()).code).toBe(0);
    const refused = await mixed.tf("validate");
    expect(refused.code).not.toBe(0);
    expect(refused.output.replace(/\s+/g, " ")).toContain(
      'Inappropriate value for attribute "commands": cannot find a common base type for all elements',
    );
    mixed.write(config({ ...WRITTEN, step: `"echo two"` }));
    const line = await mixed.tf("validate");
    expect(line.code).not.toBe(0);
    expect(line.output.replace(/\s+/g, " ")).toContain(
      'attribute "steps": element 2: attribute "run": list of string required',
    );
  });
});
