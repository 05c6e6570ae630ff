/**
 * The stacks and synth helpers of the synth tests (synth-suite.ts,
 * synth-validation.ts), typed with the cdktn flavour: the cdktf test file
 * passes its modules with the same shape.
 */
import * as path from "node:path";
import type * as CdktnLib from "cdktn";
import type { Construct } from "constructs";
import type * as CdktnBindings from "../../../src/cdktn";

/** One runtime under test: the library and the sandbox-iac entry point built on it. */
export interface CdkFlavour {
  /** `cdktn` or `cdktf`. */
  name: string;
  /** The runtime library. */
  lib: typeof CdktnLib;
  /** `sandbox-iac/cdktn` or `sandbox-iac/cdktf` (sources). */
  bindings: typeof CdktnBindings;
}

const ROOT = path.resolve(__dirname, "..", "..", "..");
/** The example app directory: relative local paths are read from its cdktf.json's directory. */
export const EXAMPLE_DIR = path.join(ROOT, "examples", "cdktn-basic");
export const SECRET = "e2b_0123456789abcdef0123456789abcdef01234567";

/** The issue's stack, built in `scope` with the flavour's classes. */
export function issueStack(scope: Construct, { lib, bindings }: CdkFlavour): void {
  new bindings.SandboxiacProvider(scope, "sandboxiac", {});
  const tools = new bindings.Template(scope, "tools", {
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
  const setup = new bindings.Provisioner(scope, "setup", {
    template: tools.templateId,
    files: [{ source: "files/config", destination: "/home/user/config" }],
    commands: [{ run: "cat /home/user/config/settings.json" }],
    keepSandbox: true,
  });
  const kept = new bindings.DataSandboxiacSandbox(scope, "kept", {
    sandboxId: setup.keptSandboxId,
  });
  const workspace = new bindings.Volume(scope, "workspace", {
    name: "cdk-workspace",
    files: [{ source: "files/config/settings.json", destination: "/settings.json" }],
  });
  const mounts = [{ name: workspace.name, path: "/mnt/workspace" }];
  const writer = new bindings.Provisioner(scope, "writer", {
    template: "base",
    volumeMounts: mounts,
    commands: [{ run: "echo 'written by the writer' > /mnt/workspace/note.txt" }],
  });
  new bindings.Provisioner(scope, "reader", {
    template: "base",
    volumeMounts: mounts,
    commands: [{ run: "grep -x 'written by the writer' /mnt/workspace/note.txt" }],
    triggers: { written: writer.id },
  });
  new lib.TerraformOutput(scope, "template_id", { value: tools.templateId });
  new lib.TerraformOutput(scope, "state", { value: kept.state });
  new lib.TerraformOutput(scope, "volume_id", { value: workspace.volumeId });
}

/** A stack in an app whose cdktf.json is the example's (so `files/...` resolves there). */
export function exampleStack(flavour: CdkFlavour): CdktnLib.TerraformStack {
  const app = flavour.lib.Testing.app({
    context: { cdktfJsonPath: path.join(EXAMPLE_DIR, "cdktf.json") },
  });
  return new flavour.lib.TerraformStack(app, "sandboxes");
}

/** {@link exampleStack} with an empty provider block, for stacks that declare only resources. */
export function stackWithProvider(flavour: CdkFlavour): CdktnLib.TerraformStack {
  const stack = exampleStack(flavour);
  new flavour.bindings.SandboxiacProvider(stack, "sandboxiac", {});
  return stack;
}

/** Synthesizes `stack` with validations and returns the parsed cdk.tf.json. */
export function synthJson(flavour: CdkFlavour, stack: CdktnLib.TerraformStack) {
  return JSON.parse(flavour.lib.Testing.synth(stack, true));
}

/** The validation error a synth with validations throws. */
export function validationError(flavour: CdkFlavour, stack: CdktnLib.TerraformStack): string {
  try {
    flavour.lib.Testing.synth(stack, true);
  } catch (err) {
    return String(err instanceof Error ? err.message : err);
  }
  throw new Error("synth passed validation");
}
