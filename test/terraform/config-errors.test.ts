/**
 * Configuration errors as a Terraform user meets them, with the real
 * terraform: a wrong key names E2B_API_KEY and the local fix (never e2b.dev or
 * the Pulumi/TypeScript option `apiKey`); with no URL set, the provider says
 * once that it uses the local service.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";

const { describe: describeWithTerraform } = terraformSuite("the Terraform config-error tests are");

jest.setTimeout(180_000);

const HCL = `${REQUIRED_PROVIDERS}data "sandboxiac_sandboxes" "all" {}
`;

describeWithTerraform("terraform: configuration errors", () => {
  const tf = terraformFixture();

  it("a wrong key says which key was refused by which URL, in HCL names, and how to fix it", async () => {
    const ws = tf.workspace(HCL, { E2B_API_KEY: "e2b_0000000000000000deadbeef" });
    expect((await ws.init()).code).toBe(0);
    const { code, output } = await ws.tf("plan", "-input=false");
    expect(code).not.toBe(0);
    const text = output.replace(/\s+/g, " ");
    expect(text).toContain(`the service at ${tf.svc.apiUrl} refused the API key from E2B_API_KEY`);
    expect(text).toContain("sandbox-iac serve");
    expect(text).not.toContain("e2b.dev");
    expect(text).not.toMatch(/\bapiKey\b/);
  });

  it("a missing key reads differently and names api_key and E2B_API_KEY", async () => {
    const ws = tf.workspace(HCL, { E2B_API_KEY: "" });
    expect((await ws.init()).code).toBe(0);
    const { code, output } = await ws.tf("plan", "-input=false");
    expect(code).not.toBe(0);
    const text = output.replace(/\s+/g, " ");
    expect(text).toContain("no API key was sent");
    expect(text).toContain("set E2B_API_KEY (or api_key in the provider block)");
    expect(text).not.toMatch(/\bapiKey\b/);
  });

  it("with no URL set, logs that it uses the local service", async () => {
    const ws = tf.workspace(HCL, { E2B_API_URL: "", TF_LOG_PROVIDER: "INFO" });
    expect((await ws.init()).code).toBe(0);
    const { output } = await ws.tf("plan", "-input=false");
    expect(output).toContain("using the local service at http://127.0.0.1:3000");
  });
});
