/**
 * The synth tests, written once and run once per runtime from
 * `cdktn.synth.test.ts` and `cdktf.synth.test.ts`: each file loads only its
 * own runtime (a jest test file is its own module registry), so cdktn and
 * cdktf never meet in one module graph. Types come from the cdktn flavour;
 * the cdktf file passes its modules with the same shape.
 */
import * as fs from "node:fs";
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
const EXAMPLE_DIR = path.join(ROOT, "examples", "cdktn-basic");
const SECRET = "e2b_0123456789abcdef0123456789abcdef01234567";

/** The issue's stack, built in `scope` with the flavour's classes. */
function issueStack(scope: Construct, { lib, bindings }: CdkFlavour): void {
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
function exampleStack(flavour: CdkFlavour): CdktnLib.TerraformStack {
  const app = flavour.lib.Testing.app({
    context: { cdktfJsonPath: path.join(EXAMPLE_DIR, "cdktf.json") },
  });
  return new flavour.lib.TerraformStack(app, "sandboxes");
}

/** {@link exampleStack} with an empty provider block, for stacks that declare only resources. */
function stackWithProvider(flavour: CdkFlavour): CdktnLib.TerraformStack {
  const stack = exampleStack(flavour);
  new flavour.bindings.SandboxiacProvider(stack, "sandboxiac", {});
  return stack;
}

/** Synthesizes `stack` with validations and returns the parsed cdk.tf.json. */
function synthJson(flavour: CdkFlavour, stack: CdktnLib.TerraformStack) {
  return JSON.parse(flavour.lib.Testing.synth(stack, true));
}

/** The validation error a synth with validations throws. */
function validationError(flavour: CdkFlavour, stack: CdktnLib.TerraformStack): string {
  try {
    flavour.lib.Testing.synth(stack, true);
  } catch (err) {
    return String(err instanceof Error ? err.message : err);
  }
  throw new Error("synth passed validation");
}

/** Registers the synth tests for `flavour`. */
export function describeSynth(flavour: CdkFlavour): void {
  const { lib, bindings } = flavour;

  describe(`sandbox-iac/${flavour.name} synth`, () => {
    beforeAll(() => lib.Testing.setupJest());

    it("exports the classes the generator gives for each Terraform type", () => {
      const types = {
        SandboxiacProvider: "sandboxiac",
        Template: "sandboxiac_template",
        Snapshot: "sandboxiac_snapshot",
        Provisioner: "sandboxiac_provisioner",
        SandboxReader: "sandboxiac_sandbox_reader",
        Volume: "sandboxiac_volume",
        Secret: "sandboxiac_secret",
        DataSandboxiacSandbox: "sandboxiac_sandbox",
        DataSandboxiacSandboxes: "sandboxiac_sandboxes",
        DataSandboxiacTemplate: "sandboxiac_template",
        DataSandboxiacSnapshots: "sandboxiac_snapshots",
        DataSandboxiacSandboxMetricsA: "sandboxiac_sandbox_metrics",
      };
      const exported = bindings as unknown as Record<string, { tfResourceType: string }>;
      for (const [name, type] of Object.entries(types)) {
        expect({ name, type: exported[name]?.tfResourceType }).toEqual({ name, type });
      }
      // The wrapped classes are the generated ones, with the same getters.
      expect(
        new bindings.Template(exampleStack(flavour), "t", {
          name: "n",
          buildAttribute: { fromTemplate: "base" },
        }),
      ).toBeInstanceOf(bindings.template.Template);
      for (const getter of ["templateId", "buildId", "cpuCount", "memoryMb", "buildAttribute"]) {
        expect(getter in bindings.Template.prototype).toBe(true);
      }
      for (const getter of ["keptSandboxId", "keepSandbox", "sandboxId", "files", "commands"]) {
        expect(getter in bindings.Provisioner.prototype).toBe(true);
      }
    });

    it("synthesizes the issue's stack with the provider's resource types and snake_case attributes", () => {
      const stack = exampleStack(flavour);
      issueStack(stack, flavour);
      const synthesized = lib.Testing.synth(stack, true);

      expect(synthesized).toHaveProvider(bindings.SandboxiacProvider);
      expect(synthesized).toHaveResourceWithProperties(bindings.Template, {
        name: "cdk-tools",
        cpu_count: 1,
        memory_mb: 512,
      });
      expect(synthesized).toHaveResourceWithProperties(bindings.Provisioner, {
        keep_sandbox: true,
        template: "${sandboxiac_template.tools.template_id}",
        commands: [{ run: "cat /home/user/config/settings.json" }],
      });
      expect(synthesized).toHaveDataSourceWithProperties(bindings.DataSandboxiacSandbox, {
        sandbox_id: "${sandboxiac_provisioner.setup.kept_sandbox_id}",
      });

      const json = JSON.parse(synthesized);
      const tools = json.resource.sandboxiac_template.tools;
      expect(
        Object.keys(tools)
          .filter((k) => k !== "//")
          .sort(),
      ).toEqual(["build", "cpu_count", "memory_mb", "name"]);
      expect(tools.build.from_template).toBe("base");
      expect(tools.build.steps[0]).toEqual({
        run: ["mkdir -p /opt/app", "chown user /opt/app"],
        user: "root",
      });
      expect(Object.keys(tools.build.steps[1].copy).sort()).toEqual(["dest", "src"]);
      expect(json.output.state.value).toBe("${data.sandboxiac_sandbox.kept.state}");
      expect(json.resource.sandboxiac_volume.workspace.name).toBe("cdk-workspace");
      const mounts = [{ name: "${sandboxiac_volume.workspace.name}", path: "/mnt/workspace" }];
      expect(json.resource.sandboxiac_provisioner.writer.volume_mounts).toEqual(mounts);
      expect(json.resource.sandboxiac_provisioner.reader).toMatchObject({
        volume_mounts: mounts,
        triggers: { written: "${sandboxiac_provisioner.writer.id}" },
      });
      expect(json.output.volume_id.value).toBe("${sandboxiac_volume.workspace.volume_id}");
      expect(json.terraform.required_providers.sandboxiac).toEqual({
        source: "sandbox-iac/sandboxiac",
        version: "~> 0.1",
      });
    });

    it("leaves the provider block empty and never writes the API key from the environment", () => {
      const before = process.env.E2B_API_KEY;
      process.env.E2B_API_KEY = SECRET;
      try {
        const stack = exampleStack(flavour);
        issueStack(stack, flavour);
        const synthesized = lib.Testing.synth(stack, true);
        expect(JSON.parse(synthesized).provider.sandboxiac).toEqual([{}]);
        expect(synthesized).not.toContain(SECRET);
      } finally {
        if (before === undefined) delete process.env.E2B_API_KEY;
        else process.env.E2B_API_KEY = before;
      }
    });

    it("takes the API key from a sensitive variable as a reference, never its value", () => {
      const stack = exampleStack(flavour);
      const key = new lib.TerraformVariable(stack, "api_key", { type: "string", sensitive: true });
      new bindings.SandboxiacProvider(stack, "sandboxiac", { apiKey: key.stringValue });
      const json = synthJson(flavour, stack);
      expect(json.provider.sandboxiac).toEqual([{ api_key: "${var.api_key}" }]);
      expect(json.variable.api_key.sensitive).toBe(true);
    });

    it("refuses a literal API key at synth, without repeating it", () => {
      const stack = exampleStack(flavour);
      new bindings.SandboxiacProvider(stack, "sandboxiac", { apiKey: SECRET });
      const message = validationError(flavour, stack);
      expect(message).toContain("api_key is a literal value");
      expect(message).toContain("E2B_API_KEY");
      expect(message).toContain("saved plan files");
      expect(message).not.toContain(SECRET);
    });

    it("packages local paths as assets that exist relative to the stack directory", () => {
      const stack = exampleStack(flavour);
      issueStack(stack, flavour);
      const outdir = lib.Testing.fullSynth(stack);
      const stackDir = path.join(outdir, "stacks", "sandboxes");
      const json = JSON.parse(fs.readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8"));

      const source: string = json.resource.sandboxiac_provisioner.setup.files[0].source;
      expect(path.isAbsolute(source)).toBe(false);
      expect(fs.readFileSync(path.join(stackDir, source, "settings.json"), "utf8")).toBe(
        fs.readFileSync(path.join(EXAMPLE_DIR, "files", "config", "settings.json"), "utf8"),
      );
      // The COPY step keeps the app's path, read from a context asset holding it at that path.
      const build = json.resource.sandboxiac_template.tools.build;
      expect(build.steps[1].copy.src).toBe("files/app");
      expect(build.context).toMatch(/^assets\//);
      expect(fs.readdirSync(path.join(stackDir, build.context, "files", "app")).sort()).toEqual([
        "README.txt",
        "hello.sh",
      ]);
    });

    it("takes run as a line or a list in a template step and a command, handing the binding the form with the same meaning", () => {
      const stack = stackWithProvider(flavour);
      new bindings.Template(stack, "t", {
        name: "run-forms",
        buildAttribute: {
          fromTemplate: "base",
          steps: [
            { run: "echo one" },
            { run: ["echo two", "echo three"], user: "root" },
            { workdir: "/tmp" },
          ],
        },
      });
      new bindings.Provisioner(stack, "p", {
        template: "base",
        commands: [
          { run: "echo a" },
          { run: ["echo b", "echo c"] },
          { cmd: "/bin/echo", args: ["d"] },
        ],
      });
      const json = synthJson(flavour, stack);
      // A step's line is a one-element list; a command's list its joined line: terraform
      // takes a list of steps, and one type per commands list.
      expect(
        json.resource.sandboxiac_template.t.build.steps.map((s: { run?: unknown }) => s.run),
      ).toEqual([["echo one"], ["echo two", "echo three"], undefined]);
      expect(
        json.resource.sandboxiac_provisioner.p.commands.map((c: { run?: unknown }) => c.run),
      ).toEqual(["echo a", "echo b && echo c", undefined]);
    });

    it("fails synth validation on a run that is neither a line nor a list, with its path", () => {
      const stack = stackWithProvider(flavour);
      new bindings.Provisioner(stack, "p", {
        template: "base",
        commands: [{ run: 42 as unknown as string }, { run: [] }],
      });
      const message = validationError(flavour, stack);
      expect(message).toContain(
        'sandboxiac_provisioner.p: commands[0].run must be a shell line ("apt-get update") or a non-empty list of shell lines',
      );
      // (The binding maps a value that is neither into an object before the check sees it.)
      expect(message).toMatch(/commands\[1\]\.run must be a shell line .*, got ""/);
    });

    it("packages a volume's seed files as assets relative to the stack directory", () => {
      const stack = stackWithProvider(flavour);
      new bindings.Volume(stack, "workspace", {
        name: "cdk-workspace",
        files: [{ source: "files/config/settings.json", destination: "/settings.json" }],
      });
      const outdir = lib.Testing.fullSynth(stack);
      const stackDir = path.join(outdir, "stacks", "sandboxes");
      const json = JSON.parse(fs.readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8"));
      const source: string = json.resource.sandboxiac_volume.workspace.files[0].source;
      expect(path.isAbsolute(source)).toBe(false);
      expect(fs.readFileSync(path.join(stackDir, source), "utf8")).toBe(
        fs.readFileSync(path.join(EXAMPLE_DIR, "files", "config", "settings.json"), "utf8"),
      );
    });

    it("refuses a literal secret value at synth, without repeating it", () => {
      const stack = stackWithProvider(flavour);
      new bindings.Secret(stack, "token", { name: "cdk-token", value: SECRET });
      const message = validationError(flavour, stack);
      expect(message).toContain("sandboxiac_secret.token: value is a literal");
      expect(message).not.toContain(SECRET);
    });

    it("takes a secret value from a sensitive variable as a reference, never its value", () => {
      const stack = stackWithProvider(flavour);
      const value = new lib.TerraformVariable(stack, "token_value", {
        type: "string",
        sensitive: true,
      });
      new bindings.Secret(stack, "token", { name: "cdk-token", value: value.stringValue });
      const json = synthJson(flavour, stack);
      expect(json.resource.sandboxiac_secret.token.value).toBe("${var.token_value}");
    });

    it("refuses a literal registry password at synth, without repeating it", () => {
      const stack = stackWithProvider(flavour);
      new bindings.Template(stack, "img", {
        name: "cdk-img",
        buildAttribute: {
          fromImage: "registry.example.com/app:1",
          fromImageRegistry: { username: "me", password: SECRET },
        },
      });
      const message = validationError(flavour, stack);
      expect(message).toContain(
        "sandboxiac_template.img: buildAttribute.fromImageRegistry.password is a literal",
      );
      expect(message).not.toContain(SECRET);
    });

    it("takes a registry password from a sensitive variable, and packages a Dockerfile's context", () => {
      const stack = stackWithProvider(flavour);
      const password = new lib.TerraformVariable(stack, "registry_password", {
        type: "string",
        sensitive: true,
      });
      new bindings.Template(stack, "df", {
        name: "cdk-df",
        buildAttribute: {
          dockerfile: "FROM registry.example.com/app:1\nCOPY app /app\n",
          context: "files",
          fromImageRegistry: { username: "me", password: password.stringValue },
        },
      });
      const outdir = lib.Testing.fullSynth(stack);
      const stackDir = path.join(outdir, "stacks", "sandboxes");
      const json = JSON.parse(fs.readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8"));
      const build = json.resource.sandboxiac_template.df.build;
      expect(build.from_image_registry.password).toBe("${var.registry_password}");
      expect(path.isAbsolute(build.context)).toBe(false);
      expect(fs.readdirSync(path.join(stackDir, build.context, "app")).sort()).toEqual([
        "README.txt",
        "hello.sh",
      ]);
    });

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
  });
}
