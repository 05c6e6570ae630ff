/**
 * The synth tests of the provider's own validation (property paths, every
 * problem at once, unknown keys, late-bound values), registered by
 * synth-suite.ts inside its describe block.
 */
import type * as CdktnBindings from "../../../src/cdktn";
import { stackWithProvider, synthJson, validationError, type CdkFlavour } from "./synth-stacks";

/** Registers the synth validation tests for `flavour` in the describe block being built. */
export function synthValidationTests(flavour: CdkFlavour): void {
  const { lib, bindings } = flavour;

  it("fails synth validation on cpuCount 0 with the property path", () => {
    const stack = stackWithProvider(flavour);
    new bindings.Template(stack, "tools", {
      name: "cdk-tools",
      cpuCount: 0,
      buildAttribute: { fromTemplate: "base" },
    });
    expect(validationError(flavour, stack)).toMatch(
      /sandboxiac_template\.tools: cpuCount must be an integer >= 1, got 0/,
    );
  });

  it("fails synth validation on an unknown step kind with the step's path", () => {
    const stack = stackWithProvider(flavour);
    new bindings.Template(stack, "tools", {
      name: "cdk-tools",
      buildAttribute: {
        fromTemplate: "base",
        // A JavaScript caller (or a cast) can pass a step kind the schema does not have.
        steps: [{ run: ["true"] }, { shell: "echo hi" } as unknown as { run: string[] }],
      },
    });
    expect(validationError(flavour, stack)).toMatch(
      /sandboxiac_template\.tools: buildAttribute\.steps\[1\] must hold one of run, copy, env, workdir or user/,
    );
  });

  it("lists every problem at once: a missing local path, a bad command, no sandbox", () => {
    const stack = stackWithProvider(flavour);
    new bindings.Provisioner(stack, "setup", {
      files: [{ source: "files/nope", destination: "/home/user/x" }],
      commands: [{ run: "true", cmd: "/bin/true" }],
    });
    const message = validationError(flavour, stack);
    expect(message).toContain(
      'sandboxiac_provisioner.setup: files[0].source "files/nope" does not exist',
    );
    expect(message).toMatch(
      /sandboxiac_provisioner\.setup: commands\[0\] must set exactly one of `run`/,
    );
    expect(message).toMatch(
      /sandboxiac_provisioner\.setup: template must set exactly one of `template` \(create a sandbox\) or `sandboxId`/,
    );
  });

  it("refuses a key the construct does not know, naming the nearest known key", () => {
    const stack = stackWithProvider(flavour);
    // A JavaScript caller (or a cast) can pass keys the generated binding would drop.
    new bindings.Provisioner(stack, "setup", {
      template: "base",
      comands: [{ run: "true" }],
      sandboxTimeout: 60,
    } as unknown as CdktnBindings.ProvisionerConfig);
    const message = validationError(flavour, stack);
    expect(message).toContain(
      'sandboxiac_provisioner.setup: comands: unknown key "comands" (got an array): did you mean "commands"?',
    );
    expect(message).toContain(
      'sandboxiac_provisioner.setup: sandboxTimeout: unknown key "sandboxTimeout" (got a number): did you mean "sandboxTimeoutSeconds"?',
    );
  });

  it("refuses an unknown key at any depth, with its property path and the nearest key in the construct's names", () => {
    const stack = stackWithProvider(flavour);
    // The generated binding would drop these silently.
    new bindings.Provisioner(stack, "setup", {
      template: "base",
      commands: [{ run: "true" }, { run: "echo hi", timeoutSecs: 30 }],
      files: [{ source: "files/config", destination: "/x", usr: "root" }],
    } as unknown as CdktnBindings.ProvisionerConfig);
    new bindings.Template(stack, "tools", {
      name: "cdk-tools",
      buildAttribute: { formTemplate: "base" },
    } as unknown as CdktnBindings.TemplateConfig);
    new bindings.Template(stack, "both", {
      name: "cdk-both",
      buildAttribute: { fromTemplate: "base", fromImage: "python:3.12" },
    });
    const message = validationError(flavour, stack);
    expect(message).toContain(
      'sandboxiac_provisioner.setup: commands[1].timeoutSecs: unknown key "timeoutSecs" (got a number): did you mean "timeoutSeconds"?',
    );
    expect(message).toContain(
      'sandboxiac_provisioner.setup: files[0].usr: unknown key "usr" (got a string): did you mean "user"?',
    );
    expect(message).toContain(
      'sandboxiac_template.tools: buildAttribute.formTemplate: unknown key "formTemplate" (got a string): did you mean "fromTemplate"?',
    );
    // The core's advice, in the construct's names and no other syntax.
    expect(message).toContain(
      "sandboxiac_template.both: buildAttribute must set exactly one of fromTemplate, fromImage or dockerfile (found fromTemplate, fromImage)",
    );
    expect(message).not.toMatch(/from_template|\{ fromTemplate:/);
  });

  it("leaves late-bound values to the provider", () => {
    const stack = stackWithProvider(flavour);
    const name = new lib.TerraformVariable(stack, "name", { type: "string" });
    const cpus = new lib.TerraformVariable(stack, "cpus", { type: "number" });
    new bindings.Template(stack, "tools", {
      name: name.stringValue,
      cpuCount: cpus.numberValue,
      buildAttribute: { fromTemplate: name.stringValue },
    });
    new bindings.Snapshot(stack, "again", { sandboxId: name.stringValue, name: "again" });
    const json = synthJson(flavour, stack);
    expect(json.resource.sandboxiac_template.tools.cpu_count).toBe("${var.cpus}");
    expect(json.resource.sandboxiac_snapshot.again.sandbox_id).toBe("${var.name}");
  });
}
