/**
 * End to end, once per runtime (`cdktn.e2e.test.ts`, `cdktf.e2e.test.ts`):
 * synthesize the example app by running it, install the provider with
 * `sandbox-iac terraform install`, then `terraform init -plugin-dir`, `apply`,
 * a `plan` with no changes and `destroy` in `cdktf.out/stacks/sandboxes`
 * (the volume's files checked through the volume content API),
 * against a fresh local service. Needs terraform on PATH; without it the
 * tests say so and are skipped.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { call, runThroughProxy } from "../../local/support";
import { startService, type TestService } from "../../support/service";
import {
  exampleDir,
  findTerraform,
  installProvider,
  run,
  runOk,
  STACK,
  synthExample,
  terraformEnv,
  type Runtime,
} from "./example";

interface TemplateRecord {
  templateID: string;
  names?: string[];
  aliases?: string[];
}

interface SandboxRecord {
  sandboxID: string;
  templateID: string;
}

interface StateFile {
  resources: Array<{
    type: string;
    name: string;
    instances: Array<{ attributes: Record<string, unknown> }>;
  }>;
}

/** Registers the end-to-end tests for `runtime`. */
export function describeEndToEnd(runtime: Runtime): void {
  const terraform = findTerraform();
  const maybe = terraform ? it : it.skip;
  if (!terraform) {
    // Said at registration: jest runs no hook of a describe whose tests are all skipped.
    console.warn(`terraform is not on PATH: the ${runtime} end-to-end tests are SKIPPED`);
  }

  describe(`${runtime}-basic applied with terraform`, () => {
    let service: TestService;
    let work: string;
    let stackDir: string;
    let env: NodeJS.ProcessEnv;
    const inStack = () => {
      // Never run terraform anywhere else (e.g. the checkout) when synth failed.
      if (!stackDir) throw new Error("the stack was not synthesized");
      return stackDir;
    };
    const tf = (...args: string[]) => runOk(terraform!, args, inStack(), env);
    /** A file's content read through the volume content API with the volume's token. */
    const volumeFile = async (volumeID: string, file: string): Promise<number | string> => {
      const vol = (await call(service, "GET", `/volumes/${volumeID}`)).body as { token: string };
      const res = await fetch(`${service.apiUrl}/volumecontent/${volumeID}/file?path=${file}`, {
        headers: { Authorization: `Bearer ${vol.token}` },
      });
      return res.status === 200 ? res.text() : res.status;
    };

    beforeAll(async () => {
      if (!terraform) return;
      work = fs.mkdtempSync(path.join(os.tmpdir(), `sandbox-iac-${runtime}-e2e-`));
      service = await startService();
      env = terraformEnv(service, work);
    });

    afterAll(async () => {
      // Leave nothing running if a test failed half-way.
      if (stackDir && fs.existsSync(path.join(stackDir, ".terraform"))) {
        await run(terraform!, ["destroy", "-auto-approve", "-input=false"], stackDir, env);
      }
      await service?.close();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    maybe("synthesizes the app by running it, without the API key", async () => {
      stackDir = await synthExample(runtime, work);
      const synthesized = fs.readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8");
      expect(JSON.parse(synthesized).terraform.required_providers.sandboxiac.source).toBe(
        "sandbox-iac/sandboxiac",
      );
      expect(synthesized).not.toContain(service.apiKey);
    });

    maybe("installs the provider and initialises the stack from the plugin directory", async () => {
      const pluginDir = path.join(work, "plugins");
      await installProvider(pluginDir);
      const init = await tf("init", "-input=false", "-plugin-dir", pluginDir);
      expect(init.stdout).toMatch(/Installed sandbox-iac\/sandboxiac v/);
    });

    maybe(
      "fails the plan of a bad value known only at plan with its attribute path, and warns of a Provisioner on the template's plain ID",
      async () => {
        // cpuCount from a variable passes synth (a token); the provider rejects it at plan.
        const badDir = path.join(work, "bad");
        fs.mkdirSync(badDir);
        const config = JSON.parse(fs.readFileSync(path.join(inStack(), "cdk.tf.json"), "utf8"));
        config.variable = { cpus: { type: "number", default: 0 } };
        config.resource.sandboxiac_template.tools.cpu_count = "${var.cpus}";
        // `template: tools.templateId` in the app: the provider reads cdk.tf.json as written.
        config.resource.sandboxiac_provisioner.setup.template =
          "${sandboxiac_template.tools.template_id}";
        config.terraform.backend.local.path = path.join(badDir, "bad.tfstate");
        fs.writeFileSync(path.join(badDir, "cdk.tf.json"), JSON.stringify(config));
        fs.cpSync(path.join(inStack(), "assets"), path.join(badDir, "assets"), { recursive: true });
        await runOk(
          terraform!,
          ["init", "-input=false", "-plugin-dir", path.join(work, "plugins")],
          badDir,
          env,
        );
        const before = (await call(service, "GET", "/templates")).body;
        const plan = await run(terraform!, ["plan", "-input=false", "-no-color"], badDir, env);
        expect(plan.code).toBe(1);
        expect(plan.stderr).toMatch(/cpu_count must be an integer >= 1, got 0/);
        expect(plan.stderr).toContain("with sandboxiac_template.tools");
        expect(`${plan.stdout}${plan.stderr}`.replace(/\s+/g, " ")).toContain(
          "template takes sandboxiac_template.tools.template_id, which stays the same across builds: a new build of the Template will not run this Provisioner again; give sandboxiac_template.tools.ref instead",
        );
        expect((await call(service, "GET", "/templates")).body).toEqual(before);
      },
    );

    maybe(
      "applies: the template and the kept sandbox exist with the declared content",
      async () => {
        const apply = await runOk(
          terraform!,
          ["apply", "-auto-approve", "-input=false"],
          inStack(),
          { ...env, TF_LOG_PROVIDER: "INFO" },
        );
        // The COPY step is logged, built and hashed by the path the app wrote, not its asset's.
        const logged = apply.stdout + apply.stderr;
        expect(logged).toMatch(/sandboxiac_template cdk-tools: uploading files\/app \(\d+ bytes\)/);
        expect(logged).toMatch(
          /sandboxiac_template cdk-tools: info \[\d+\] Step 2\/2: COPY files\/app \/opt\/app/,
        );
        expect(logged).not.toMatch(/COPY assets\/|uploading assets\//);
        const outputs = JSON.parse((await tf("output", "-json")).stdout) as Record<
          string,
          { value: string }
        >;
        const templateID = outputs.template_id.value;
        expect(outputs.state.value).toBe("running");

        const templates = (await call(service, "GET", "/templates")).body as TemplateRecord[];
        const tools = templates.find((t) => t.templateID === templateID);
        expect([...(tools?.names ?? []), ...(tools?.aliases ?? [])].join(" ")).toContain(
          "cdk-tools",
        );

        const sandboxes = (await call(service, "GET", "/sandboxes")).body as SandboxRecord[];
        expect(sandboxes).toHaveLength(1);
        const kept = sandboxes[0];
        const detail = (await call(service, "GET", `/sandboxes/${kept.sandboxID}`)).body as {
          envdAccessToken?: string;
        };
        const inSandbox = (cmd: string) =>
          runThroughProxy(service, kept.sandboxID, cmd, detail.envdAccessToken);

        const settings = await inSandbox("cat /home/user/config/settings.json");
        expect(settings.exitCode).toBe(0);
        expect(settings.stdout).toBe(
          fs.readFileSync(
            path.join(exampleDir(runtime), "files", "config", "settings.json"),
            "utf8",
          ),
        );
        const copied = await inSandbox("sh /opt/app/hello.sh && stat -c %U /opt/app");
        expect(copied.exitCode).toBe(0);
        expect(copied.stdout).toContain("hello from the cdk-basic template");
        expect(copied.stdout).toContain("user");

        const state = fs.readFileSync(
          path.join(stackDir, "..", "..", "..", `terraform.${STACK}.tfstate`),
          "utf8",
        );
        expect(state).not.toContain(service.apiKey);

        // The volume holds its seed file and what the writer's sandbox wrote; the reader's
        // sandbox, created after the writer's, found that file (its grep fails the apply otherwise).
        const volumeID = outputs.volume_id.value;
        expect(await volumeFile(volumeID, "/settings.json")).toBe(
          fs.readFileSync(
            path.join(exampleDir(runtime), "files", "config", "settings.json"),
            "utf8",
          ),
        );
        expect(await volumeFile(volumeID, "/note.txt")).toBe("written by the writer\n");
        const attributes = (name: string) =>
          (JSON.parse(state) as StateFile).resources.find(
            (r) => r.type === "sandboxiac_provisioner" && r.name === name,
          )?.instances[0]?.attributes;
        expect(attributes("writer")).toMatchObject({ commands_run: 1 });
        expect(attributes("reader")).toMatchObject({
          commands_run: 1,
          triggers: { written: attributes("writer")?.id },
        });
      },
    );

    maybe("plans no changes after apply", async () => {
      const plan = await run(
        terraform!,
        ["plan", "-detailed-exitcode", "-input=false"],
        inStack(),
        env,
      );
      expect({ code: plan.code, stderr: plan.stderr }).toEqual({ code: 0, stderr: "" });
      expect(plan.stdout).toContain("No changes.");
    });

    maybe("destroys everything it created", async () => {
      await tf("destroy", "-auto-approve", "-input=false");
      expect((await call(service, "GET", "/sandboxes")).body).toEqual([]);
      const templates = (await call(service, "GET", "/templates")).body as TemplateRecord[];
      expect(templates.filter((t) => JSON.stringify(t).includes("cdk-tools"))).toEqual([]);
      expect((await call(service, "GET", "/volumes")).body).toEqual([]);
    });
  });
}
