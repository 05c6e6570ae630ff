/**
 * pulumi-basic: a template built from `base`, a sandbox of it provisioned with
 * files and setup commands (ending in a snapshot and kept running), and a
 * reader of that sandbox; a volume that one provisioner's sandbox writes into
 * and a second sandbox reads; with the `image` config, a template built from
 * that container image and a sandbox of it running a command.
 *
 * Run: `npm install && npm run build && pulumi up`. The service comes from the
 * stack config (`sandbox-iac:apiUrl`, secret `sandbox-iac:apiKey`) or from the
 * E2B_API_URL / E2B_API_KEY environment variables; by default the local
 * service (`sandbox-iac serve`) at http://127.0.0.1:3000.
 */
import * as pulumi from "@pulumi/pulumi";
import { Provisioner, SandboxReader, Template, Volume } from "sandbox-iac/pulumi";

const config = new pulumi.Config();
const prefix = config.get("prefix") ?? "pulumi-basic";

const tools = new Template("tools", {
  name: `${prefix}-tools`,
  tags: ["v1"],
  cpuCount: 1,
  memoryMB: 512,
  build: {
    fromTemplate: "base",
    steps: [
      { run: ["mkdir -p /opt/app", "chown user /opt/app"], user: "root" },
      { copy: { src: "files/app", dest: "/opt/app", user: "user" } },
      { env: { APP_HOME: "/opt/app" } },
      { workdir: "/opt/app" },
    ],
  },
});

// A template from a container image, when the `image` config names one (`npm
// run demo` serves a busybox image from a registry on loopback): the image's
// layers, then E2B's conventions on top (user `user` with /home/user, the agent).
const image = config.get("image");
const fromImage = image
  ? new Template("from-image", {
      name: `${prefix}-from-image`,
      cpuCount: 1,
      memoryMB: 512,
      build: { fromImage: image, steps: [{ run: "cp /etc/image-note /home/user/note.txt" }] },
    })
  : undefined;
const imageCheck = fromImage
  ? new Provisioner("image-check", {
      template: fromImage.ref,
      commands: [{ run: 'echo "$(whoami): $(cat /home/user/note.txt)"' }],
    })
  : undefined;

const setup = new Provisioner("setup", {
  template: tools.ref, // the template at its current build: a rebuild runs this again
  files: [{ source: "files/config", destination: "/home/user/config" }],
  commands: [
    { run: "sh /opt/app/hello.sh > /home/user/hello.txt" },
    { run: "cat /home/user/config/settings.json" },
  ],
  // String values only; bump one to run the commands again.
  triggers: { revision: "1" },
  snapshot: { name: `${prefix}-ready` },
  keepSandbox: true,
});

// keepSandbox: true, so the provisioned sandbox is still running and can be read.
const keptID = setup.keptSandboxID.apply((id) => id ?? "");
const kept = new SandboxReader("kept", { sandboxID: keptID, includeMetrics: true });

// A volume outlives sandboxes: one provisioner's sandbox writes into it, a second reads it.
const workspace = new Volume("workspace", {
  name: `${prefix}-workspace`,
  files: [{ source: "files/config/settings.json", destination: "/settings.json" }],
});
const mounts = [{ name: workspace.name, path: "/mnt/workspace" }];
const writer = new Provisioner("writer", {
  template: "base",
  volumeMounts: mounts,
  commands: [{ run: "echo 'written by the writer' > /mnt/workspace/note.txt" }],
});
const reader = new Provisioner("reader", {
  template: "base",
  volumeMounts: mounts,
  // Fails the update unless the writer's file is there.
  commands: [{ run: "grep -x 'written by the writer' /mnt/workspace/note.txt" }],
  triggers: { written: writer.id },
});

export const templateID = tools.templateID;
export const imageTemplateID = fromImage?.templateID;
export const imageDigest = fromImage?.imageDigest;
export const imageCommandsRun = imageCheck?.commandsRun;
export const templateNames = tools.names;
export const buildStatus = tools.buildStatus;
export const sandboxID = keptID;
export const snapshotID = setup.snapshotID;
export const sandboxState = kept.state;
export const sandboxTemplate = kept.templateID;
export const envdAccessToken = kept.envdAccessToken;
export const volumeID = workspace.volumeID;
export const writerCommandsRun = writer.commandsRun;
export const readerCommandsRun = reader.commandsRun;
