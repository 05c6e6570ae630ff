/**
 * The cloud's shape, end to end: `sandbox-iac serve --tls-cert --tls-key`
 * on port 443 of a loopback address, and clients given only `E2B_DOMAIN` and
 * `E2B_API_KEY`, as against E2B's cloud. They find `api.<domain>` and
 * `<port>-<sandboxID>.<domain>` through a resolver this test runs (dnsmasq,
 * in a mount namespace of each client's own, so the host's resolv.conf is
 * untouched) and trust the service's certificate through a CA made for the
 * run (`NODE_EXTRA_CA_CERTS`). The real terraform applies a Template and a
 * Provisioner; the official SDK then creates a sandbox from the
 * Provisioner's snapshot, runs a command, uploads and reads a file, and kills it;
 * an SDK given only the API's URL finds the sandbox through the answer's `domain`.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { phases } from "../support/phases";
import {
  startPrivateResolver,
  freeLoopbackAddress,
  type PrivateResolver,
} from "../support/private-resolver";
import { startServiceProcess, type ServiceProcess } from "../support/service";
import { makeTestCa } from "../support/test-ca";
import { REQUIRED_PROVIDERS, terraformSuite } from "../terraform/support";
import { installPlugins } from "../terraform/workspace";

const ROOT = path.resolve(__dirname, "..", "..");
/** A name under the reserved `.test` TLD: nothing outside this test answers for it. */
const DOMAIN = "sandboxes.sandbox-iac.test";

const { version, describe: describeWithTerraform } = terraformSuite("the cloud addressing test is");

jest.setTimeout(300_000);

const HCL = `${REQUIRED_PROVIDERS}
provider "sandboxiac" {} # only E2B_DOMAIN and E2B_API_KEY in the environment

resource "sandboxiac_template" "app" {
  name = "cloud-app"
  build = {
    from_template = "base"
    # The COPY's archive goes to the upload link the service hands out: https://api.<domain>/...
    steps = [{ copy = { src = "files/app", dest = "/home/user/app" } }]
  }
}

resource "sandboxiac_provisioner" "setup" {
  template = sandboxiac_template.app.ref
  files    = [{ source = "files/config", destination = "/home/user/config" }]
  commands = [{ run = "cat /home/user/app/README.txt /home/user/config/settings.json > /home/user/seen.txt" }]
  snapshot = { name = "cloud-app-ready" }
}
`;

/** Run by the official SDK in the namespace: everything it knows is in its environment. */
const SDK_SCRIPT = `
const { Sandbox } = require("e2b");
(async () => {
  const sbx = await Sandbox.create("cloud-app-ready", { timeoutMs: 120000 });
  const seen = await sbx.commands.run("cat /home/user/seen.txt");
  await sbx.files.write("/home/user/up.txt", "uploaded over TLS");
  const read = await sbx.files.read("/home/user/up.txt");
  const host = sbx.getHost(8000);
  const envdUrl = sbx.envdApiUrl;
  await sbx.kill();
  const left = (await Sandbox.list({ query: { state: ["running", "paused"] } }).nextItems())
    .map((s) => s.sandboxId);
  console.log(JSON.stringify({ id: sbx.sandboxId, seen: seen.stdout, read, host, envdUrl, left }));
})().catch((err) => { console.error(err); process.exit(1); });
`;

/**
 * An SDK given the API's URL but no E2B_DOMAIN (its default domain is then
 * E2B's own): it reaches the sandbox only through the `domain` of the create answer.
 */
const ANSWER_DOMAIN_SCRIPT = `
const { Sandbox } = require("e2b");
(async () => {
  const sbx = await Sandbox.create("base", { timeoutMs: 120000 });
  const said = await sbx.commands.run("echo reached");
  const host = sbx.getHost(8000);
  const envdUrl = sbx.envdApiUrl;
  await sbx.kill();
  console.log(JSON.stringify({ id: sbx.sandboxId, said: said.stdout, host, envdUrl }));
})().catch((err) => { console.error(err); process.exit(1); });
`;

describeWithTerraform(
  `the SDK and terraform with only E2B_DOMAIN, over TLS (${version ?? "no terraform"})`,
  () => {
    const phase = phases();
    let dir: string;
    let resolver: PrivateResolver;
    let svc: ServiceProcess;
    let plugins: string;
    let work: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "sandbox-iac-cloud-"));
      const ca = makeTestCa(dir, [`*.${DOMAIN}`]);
      const address = freeLoopbackAddress();
      resolver = await startPrivateResolver({ [DOMAIN]: address });
      // No --domain: the service takes it from the certificate's *.<domain> name (port 443 left out).
      svc = await startServiceProcess({
        args: [
          "--host",
          address,
          "--port",
          "443",
          "--tls-cert",
          ca.certFile,
          "--tls-key",
          ca.keyFile,
        ],
      });
      plugins = installPlugins();
      work = mkdtempSync(path.join(tmpdir(), "tf-cloud-"));
      cpSync(path.join(ROOT, "examples", "terraform-basic", "files"), path.join(work, "files"), {
        recursive: true,
      });
      writeFileSync(path.join(work, "main.tf"), HCL);
      env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: work,
        E2B_DOMAIN: DOMAIN,
        E2B_API_KEY: svc.apiKey,
        NODE_EXTRA_CA_CERTS: ca.caFile,
        CHECKPOINT_DISABLE: "1",
        TF_IN_AUTOMATION: "1",
        TF_CLI_CONFIG_FILE: "/dev/null",
      };
    }, 120_000);

    afterAll(async () => {
      await svc?.close();
      resolver?.close();
      for (const d of [dir, plugins, work]) if (d) rmSync(d, { recursive: true, force: true });
    });

    const terraform = (...args: string[]) =>
      resolver.run("terraform", [...args, "-no-color", "-input=false"], env, work);

    phase(
      "serve prints only E2B_DOMAIN and E2B_API_KEY, with the domain of its certificate",
      async () => {
        expect(svc.readyLine).toBe(
          `sandbox-iac: ready on https://api.${DOMAIN} E2B_DOMAIN=${DOMAIN} E2B_API_KEY=${svc.apiKey}`,
        );
      },
    );

    phase(
      "terraform applies a Template and a Provisioner against https://api.<domain>",
      async () => {
        const init = await terraform("init", `-plugin-dir=${plugins}`);
        expect(init.stdout + init.stderr).toContain("Terraform has been successfully initialized");
        const apply = await terraform("apply", "-auto-approve");
        expect(apply.stderr).toBe("");
        expect(apply.stdout).toContain("Resources: 2 added");
      },
    );

    phase(
      "the SDK creates from the snapshot, runs, uploads, reads and kills over TLS",
      async () => {
        const run = await resolver.run(process.execPath, ["-e", SDK_SCRIPT], env, ROOT);
        expect(run.stderr).toBe("");
        const out = JSON.parse(run.stdout) as Record<string, unknown>;
        const id = out.id as string;
        expect(out).toEqual({
          id,
          // README.txt and settings.json: the template's COPY and the Provisioner's upload.
          seen:
            readFileSync(path.join(work, "files", "app", "README.txt"), "utf8") +
            readFileSync(path.join(work, "files", "config", "settings.json"), "utf8"),
          read: "uploaded over TLS",
          host: `8000-${id}.${DOMAIN}`,
          envdUrl: `https://49983-${id}.${DOMAIN}`,
          left: [],
        });
      },
    );

    phase(
      "an SDK given only the API URL builds the sandbox's URLs from the create answer's domain",
      async () => {
        const { E2B_DOMAIN: _unset, ...rest } = env;
        const apiOnly = { ...rest, E2B_API_URL: `https://api.${DOMAIN}` };
        const run = await resolver.run(
          process.execPath,
          ["-e", ANSWER_DOMAIN_SCRIPT],
          apiOnly,
          ROOT,
        );
        expect(run.stderr).toBe("");
        const out = JSON.parse(run.stdout) as Record<string, unknown>;
        const id = out.id as string;
        expect(out).toEqual({
          id,
          said: "reached\n",
          host: `8000-${id}.${DOMAIN}`,
          envdUrl: `https://49983-${id}.${DOMAIN}`,
        });
      },
    );

    phase("terraform destroys both", async () => {
      const destroy = await terraform("destroy", "-auto-approve");
      expect(destroy.stdout).toContain("Resources: 2 destroyed");
    });
  },
);
