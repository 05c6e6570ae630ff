/**
 * cdktf-basic: cdktn-basic for cdktf 0.21 apps (same stack, cdktf imports). A template built
 * from `base`, a sandbox of it provisioned with files and a setup command and
 * kept running, and a data source reading that sandbox; a volume that one
 * provisioner's sandbox writes into and a second sandbox reads; with
 * the context's `image` set, a template from that container image and a sandbox of it.
 *
 * Synthesize by running the app (`npm run build && node bin/main.js`, or
 * `cdktf synth`), then from cdktf.out/stacks/sandboxes:
 * `sandbox-iac terraform install --dir ~/.sandbox-iac/plugins`,
 * `terraform init -plugin-dir ~/.sandbox-iac/plugins`, `terraform apply`.
 * The provider reads E2B_API_URL / E2B_API_KEY from the environment.
 */
import { App, TerraformOutput, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import {
  DataSandboxiacSandbox,
  Provisioner,
  SandboxiacProvider,
  Template,
  Volume,
} from "sandbox-iac/cdktf";

class SandboxStack extends TerraformStack {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new SandboxiacProvider(this, "sandboxiac", {});
    const tools = new Template(this, "tools", {
      name: "cdk-tools",
      cpuCount: 1,
      memoryMb: 512,
      buildAttribute: {
        fromTemplate: "base",
        steps: [
          { run: ["mkdir -p /opt/app", "chown user /opt/app"], user: "root" },
          { copy: { src: "files/app", dest: "/opt/app" } },
        ],
      },
    });
    // A template from a container image when the context's `image` names one
    // (cdktf.json's "context", or CDKTF_CONTEXT_JSON as npm run demo:cdk sets it
    // for a busybox image it serves from a registry on loopback): the image's
    // layers, then E2B's conventions (user `user`, the agent).
    const image: unknown = this.node.tryGetContext("image");
    if (typeof image === "string" && image !== "") {
      const fromImage = new Template(this, "from-image", {
        name: "cdk-from-image",
        cpuCount: 1,
        memoryMb: 512,
        buildAttribute: {
          fromImage: image,
          steps: [{ run: "cp /etc/image-note /home/user/note.txt" }],
        },
      });
      new Provisioner(this, "image-check", {
        template: fromImage.ref,
        commands: [{ run: 'echo "$(whoami): $(cat /home/user/note.txt)"' }],
      });
      new TerraformOutput(this, "image_digest", { value: fromImage.imageDigest });
    }
    const setup = new Provisioner(this, "setup", {
      template: tools.ref, // the template at its current build: a rebuild runs this again
      files: [{ source: "files/config", destination: "/home/user/config" }],
      commands: [{ run: "cat /home/user/config/settings.json" }],
      keepSandbox: true,
    });
    const kept = new DataSandboxiacSandbox(this, "kept", { sandboxId: setup.keptSandboxId });

    // A volume outlives sandboxes: one provisioner's sandbox writes into it, a second reads it.
    const workspace = new Volume(this, "workspace", {
      name: "cdk-workspace",
      files: [{ source: "files/config/settings.json", destination: "/settings.json" }],
    });
    const mounts = [{ name: workspace.name, path: "/mnt/workspace" }];
    const writer = new Provisioner(this, "writer", {
      template: "base",
      volumeMounts: mounts,
      commands: [{ run: "echo 'written by the writer' > /mnt/workspace/note.txt" }],
    });
    new Provisioner(this, "reader", {
      template: "base",
      volumeMounts: mounts,
      // Fails the apply unless the writer's file is there.
      commands: [{ run: "grep -x 'written by the writer' /mnt/workspace/note.txt" }],
      triggers: { written: writer.id },
    });

    new TerraformOutput(this, "template_id", { value: tools.templateId });
    new TerraformOutput(this, "state", { value: kept.state });
    new TerraformOutput(this, "volume_id", { value: workspace.volumeId });
  }
}

const app = new App();
new SandboxStack(app, "sandboxes");
app.synth();
