/**
 * What a Terraform user sees of the provider's progress: its lines are hclog
 * JSON on stderr, so `TF_LOG_PROVIDER=INFO` shows the template's build log and
 * the setup commands' output among terraform's own "Creation complete after"
 * lines (docs/terraform-provider.md#provider-logs). Skipped (and said so)
 * where terraform is not on PATH.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import type { Workspace } from "./workspace";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform provider-log tests are",
);

jest.setTimeout(300_000);

const HCL = `${REQUIRED_PROVIDERS}resource "sandboxiac_template" "t" {
  name  = "tf-logs"
  build = {
    from_template = "base"
    steps         = [{ run = ["echo built-by-step > /tmp/built.txt"] }]
  }
}
resource "sandboxiac_provisioner" "p" {
  template = sandboxiac_template.t.template_id
  commands = [{ run = "echo hello-from-setup; cat /tmp/built.txt" }]
}
`;

describeWithTerraform(`terraform provider logs (${version ?? "no terraform"})`, () => {
  let ws: Workspace | undefined;
  const tf = terraformFixture({
    beforeClose: async () => {
      await ws?.tf("destroy", "-auto-approve", "-input=false");
    },
  });

  it("shows the build log and the setup commands' output at TF_LOG_PROVIDER=INFO, never the API key", async () => {
    ws = tf.workspace(HCL, { TF_LOG_PROVIDER: "INFO" });
    expect((await ws.init()).code).toBe(0);
    const apply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(apply.code).toBe(0);
    const line = (text: string): RegExp =>
      new RegExp(
        `\\[INFO\\] +provider\\.terraform-provider-sandboxiac[^:]*: ${text}: @module=sandboxiac`,
      );
    expect(apply.output).toMatch(line("building template tf-logs \\(\\w+, build [\\w-]+\\)"));
    expect(apply.output).toMatch(
      line("\\S+ info \\[1\\] Step 1/1: RUN echo built-by-step > /tmp/built.txt"),
    );
    expect(apply.output).toMatch(line("\\[1/1\\] \\$ echo hello-from-setup; cat /tmp/built.txt"));
    expect(apply.output).toMatch(line(" {2}\\| hello-from-setup"));
    expect(apply.output).toMatch(line(" {2}\\| built-by-step"));
    // Terraform's own durations, per resource.
    expect(apply.output).toMatch(/sandboxiac_template\.t: Creation complete after \d+s \[id=\w+\]/);
    expect(apply.output).toMatch(/sandboxiac_provisioner\.p: Creation complete after \d+s/);
    expect(apply.output).not.toContain(tf.svc.apiKey);
  });
});
