/**
 * The synth tests, written once and run once per runtime from
 * `cdktn.synth.test.ts` and `cdktf.synth.test.ts`: each file loads only its
 * own runtime (a jest test file is its own module registry), so cdktn and
 * cdktf never meet in one module graph. Types come from the cdktn flavour;
 * the cdktf file passes its modules with the same shape.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import {
  EXAMPLE_DIR,
  SECRET,
  exampleStack,
  issueStack,
  stackWithProvider,
  synthJson,
  validationError,
  type CdkFlavour,
} from "./synth-stacks";
import { synthEgressTests } from "./synth-egress";
import { synthValidationTests } from "./synth-validation";

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

    synthValidationTests(flavour);
    synthEgressTests(flavour);
  });
}
