/**
 * What a Terraform user sees of the provider's progress: its lines are
 * `[INFO] `-prefixed on stderr, so `TF_LOG_PROVIDER=INFO` shows the template's
 * build log and the setup commands' output among terraform's own "Creation
 * complete after" lines, each under terraform's one timestamp and naming its
 * resource (docs/terraform-provider.md#provider-logs). Skipped (and said so)
 * where terraform is not on PATH.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import type { Workspace } from "./workspace";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform provider-log tests are",
);

jest.setTimeout(300_000);

/** A secret value with no recognisable shape: redacted because the provider knows it is secret. */
const SECRET_TOKEN = "deploy-token-7f3a91c2";
/** sha256("abc"): a 64-hex string that is not a secret. */
const ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

const HCL = `${REQUIRED_PROVIDERS}resource "sandboxiac_template" "t" {
  name  = "tf-logs"
  build = {
    from_template = "base"
    steps         = [{ run = ["echo built-by-step > /tmp/built.txt"] }]
  }
}
resource "sandboxiac_provisioner" "p" {
  template = sandboxiac_template.t.template_id
  commands = [
    { run = "echo hello-from-setup; cat /tmp/built.txt" },
    { run = "printf abc | sha256sum; echo \\"token=$DEPLOY_TOKEN\\"" },
  ]
  envs = { DEPLOY_TOKEN = "${SECRET_TOKEN}" }
}
`;

describeWithTerraform(`terraform provider logs (${version ?? "no terraform"})`, () => {
  let ws: Workspace | undefined;
  const tf = terraformFixture({
    beforeClose: async () => {
      await ws?.tf("destroy", "-auto-approve", "-input=false");
    },
  });

  it("shows the build log and the setup commands' output at TF_LOG_PROVIDER=INFO, one timestamp and the resource on each line, hashes included, never the API key or a secret input", async () => {
    ws = tf.workspace(HCL, { TF_LOG_PROVIDER: "INFO" });
    expect((await ws.init()).code).toBe(0);
    const apply = await ws.tf("apply", "-auto-approve", "-input=false");
    expect(apply.code).toBe(0);
    const templateID = String(ws.resource("sandboxiac_template.t")?.template_id);
    const template = "sandboxiac_template tf-logs";
    // Terraform never tells a provider the resource's address: a Provisioner
    // being created is named by its template.
    const provisioner = `sandboxiac_provisioner from template ${templateID}`;
    const line = (resource: string, text: string): RegExp =>
      new RegExp(
        `^\\S+ \\[INFO\\] +provider\\.terraform-provider-sandboxiac[^:]*: \\[INFO\\] ${resource}: ${text}$`,
        "m",
      );
    expect(apply.output).toMatch(
      line(template, "building template tf-logs \\(\\w+, build [\\w-]+\\)"),
    );
    expect(apply.output).toMatch(
      line(template, "info \\[1\\] Step 1/1: RUN echo built-by-step > /tmp/built.txt"),
    );
    expect(apply.output).toMatch(
      line(provisioner, "\\[1/2\\] \\$ echo hello-from-setup; cat /tmp/built.txt"),
    );
    expect(apply.output).toMatch(line(provisioner, " {2}\\| hello-from-setup"));
    expect(apply.output).toMatch(line(provisioner, " {2}\\| built-by-step"));
    // One timestamp per provider line (terraform's), and every one names its resource.
    const providerLines = apply.output
      .split("\n")
      .filter((l) => l.includes("provider.terraform-provider-sandboxiac") && l.includes("[INFO] "));
    const ours = providerLines.filter((l) => /: \[INFO\] /.test(l));
    expect(ours.length).toBeGreaterThan(5);
    for (const l of ours) {
      expect(l.match(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/g)).toHaveLength(1);
      expect(l).toMatch(/: \[INFO\] sandboxiac_(template|provisioner) /);
      expect(l).not.toMatch(/timestamp=|@module=/);
    }
    // Terraform's own durations, per resource.
    expect(apply.output).toMatch(/sandboxiac_template\.t: Creation complete after \d+s \[id=\w+\]/);
    expect(apply.output).toMatch(/sandboxiac_provisioner\.p: Creation complete after \d+s/);
    expect(apply.output).not.toContain(tf.svc.apiKey);
    // A clean exit: every provider process ended within go-plugin's 2 s after Shutdown.
    expect(apply.output).not.toMatch(/plugin failed to exit gracefully|\[ERROR\]/);
    // Redaction by value: a hash a command prints shows, a secret input it echoes does not.
    expect(apply.output).toMatch(line(provisioner, ` {2}\\| ${ABC_SHA256} {2}-`));
    expect(apply.output).toMatch(line(provisioner, " {2}\\| token=\\[redacted\\]"));
    expect(apply.output).not.toContain(SECRET_TOKEN);
  });
});
