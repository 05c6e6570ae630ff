/**
 * Typos inside nested attributes, with the real terraform: terraform drops
 * attributes an object type does not have before the provider sees the
 * configuration (hashicorp/terraform#33570), so the provider reads what the
 * user wrote and refuses them, in HCL names, at `validate` and `plan`.
 */
import { rmSync } from "node:fs";
import { REQUIRED_PROVIDERS, terraformSuite } from "./support";
import { Workspace, installPlugins } from "./workspace";

const suite = terraformSuite("the Terraform unknown-key tests are");

const TYPOS = `${REQUIRED_PROVIDERS}
variable "user" {
  type    = string
  default = "root"
}

resource "sandboxiac_provisioner" "setup" {
  template = "base"
  commands = [{ run = "echo hi" }, { run = "echo hi", timeout_secs = 30 }]
}

resource "sandboxiac_provisioner" "upload" {
  template = "base"
  files    = [{ source = "files", destination = "/home/user/x", usr = var.user }]
}

resource "sandboxiac_template" "tools" {
  name  = "tools"
  build = { form_template = "base" }
}
`;

suite.describe("terraform: unknown keys in nested attributes", () => {
  jest.setTimeout(180_000);
  let plugins = "";
  const workspaces: Workspace[] = [];
  beforeAll(() => {
    plugins = installPlugins();
  });
  afterAll(() => {
    for (const ws of workspaces) ws.remove();
    if (plugins) rmSync(plugins, { recursive: true, force: true });
  });
  function workspace(hcl: string, env: Record<string, string> = {}): Workspace {
    const ws = new Workspace(hcl, plugins, { E2B_API_URL: "http://127.0.0.1:9", ...env });
    workspaces.push(ws);
    return ws;
  }

  it("validate refuses each one with its HCL path and the nearest known key", async () => {
    const ws = workspace(TYPOS);
    expect((await ws.init()).code).toBe(0);
    const { code, output } = await ws.tf("validate");
    expect(code).not.toBe(0);
    const text = output.replace(/\s+/g, " ");
    expect(text).toContain(
      'commands[1].timeout_secs: unknown key "timeout_secs" (got a number): did you mean "timeout_seconds"?',
    );
    expect(text).toContain('files[0].usr: unknown key "usr" (got a string): did you mean "user"?');
    expect(text).toContain(
      'build.form_template: unknown key "form_template" (got a string): did you mean "from_template"?',
    );
    // Each on its own resource, and the core's advice in HCL names.
    expect(text).toContain("with sandboxiac_provisioner.setup");
    expect(text).toContain("with sandboxiac_provisioner.upload");
    expect(text).toContain(
      "build must set exactly one of from_template, from_image or dockerfile (found none)",
    );
    expect(text).not.toMatch(/timeoutSeconds|fromTemplate|\{ from_template:/);
  });

  it("plan refuses them too, before calling the service", async () => {
    const ws = workspace(TYPOS);
    expect((await ws.init()).code).toBe(0);
    const { code, output } = await ws.tf("plan", "-input=false");
    expect(code).not.toBe(0);
    expect(output.replace(/\s+/g, " ")).toContain(
      'commands[1].timeout_secs: unknown key "timeout_secs"',
    );
    expect(output).not.toContain("service unreachable");
  });

  it("accepts the same configuration spelt right, and the provider exits without an error line", async () => {
    const ws = workspace(
      TYPOS.replace("timeout_secs", "timeout_seconds")
        .replace("usr =", "user =")
        .replace("form_template", "from_template"),
      { TF_LOG: "INFO" },
    );
    expect((await ws.init()).code).toBe(0);
    for (let i = 0; i < 3; i++) {
      const { code, output } = await ws.tf("validate");
      expect(output).toContain("Success!");
      expect(code).toBe(0);
      // go-plugin's stdout reader met the provider's exit before end-of-file.
      expect(output).not.toContain("file already closed");
    }
  });
});
