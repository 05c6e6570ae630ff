/**
 * Templates from a container image (credentials from a sensitive variable)
 * and from a Dockerfile, with the real terraform binary against the local
 * service and a registry behind basic auth on loopback: create, no changes, a
 * changed step (the plan says which), import by id, destroy. The password is never in any
 * plan or apply output (state files hold sensitive values in clear, as
 * Terraform does). Skipped (and said so) where terraform is not on PATH.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { makeBusyboxImage, startRegistry, type TestRegistry } from "../support/registry";
import type { Workspace } from "./workspace";

jest.setTimeout(900_000);

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform image/Dockerfile template scenario is",
);

const AUTH = { username: "tf-user", password: "tf-registry-pw-8c1d0e" };

const hcl = (image: string, message: string) => `${REQUIRED_PROVIDERS}variable "registry_password" {
  type      = string
  sensitive = true
}
resource "sandboxiac_template" "img" {
  name             = "tf-from-image"
  min_free_disk_mb = 64
  build = {
    from_image          = "${image}"
    from_image_registry = { username = "${AUTH.username}", password = var.registry_password }
    steps = [
      { run = ["echo ${message} > /tmp/message"] },
    ]
  }
}
resource "sandboxiac_template" "df" {
  # One build at a time: the machine running the tests is shared.
  depends_on = [sandboxiac_template.img]
  name       = "tf-from-dockerfile"
  build = {
    dockerfile = file("\${path.module}/Dockerfile")
    context    = "\${path.module}/app"
  }
}
`;

// FROM E2B's base: offline, the service builds it on the built-in base (its WORKDIR needs getent,
// which the busybox test image lacks).
const dockerfile = (extra: string) =>
  `FROM e2bdev/base\nCOPY *.txt /app/\nRUN cat /app/hello.txt${extra}\nENV GREETING=hi\n`;

describeWithTerraform(`terraform templates from images (${version ?? "no terraform"})`, () => {
  let ws: Workspace | undefined;
  let registry: TestRegistry | undefined;
  let work: string;
  let image: string;
  const tf = terraformFixture({
    beforeClose: async () => {
      await registry?.close();
      rmSync(work, { recursive: true, force: true });
    },
  });

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "tf-images-"));
    registry = await startRegistry(AUTH);
    await registry.push(await makeBusyboxImage(work), "private/busy:v1");
    image = `${registry.host}/private/busy:v1`;
  }, 120_000);

  const neverThePassword = () => {
    for (const out of ws!.outputs) expect(out).not.toContain(AUTH.password);
  };

  describe("one scenario, phase by phase", () => {
    const phase = phases();

    phase(
      "builds both with the credentials, reports the image digest, and plans clean",
      async () => {
        ws = tf.workspace(hcl(image, "one"));
        writeFileSync(
          path.join(ws.dir, "terraform.tfvars"),
          `registry_password = "${AUTH.password}"\n`,
        );
        writeFileSync(path.join(ws.dir, "Dockerfile"), dockerfile(""));
        mkdirSync(path.join(ws.dir, "app"));
        writeFileSync(path.join(ws.dir, "app", "hello.txt"), "hello\n");
        await ws.init();
        const plan = await ws.tf("plan", "-input=false");
        expect(plan.output).toContain("(sensitive value)");
        const created = await ws.tf("apply", "-auto-approve", "-input=false");
        expect(created.output).toContain("Resources: 2 added");
        const img = ws.resource("sandboxiac_template.img")!;
        expect(img.build_status).toBe("ready");
        expect(img.image_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        const df = ws.resource("sandboxiac_template.df")!;
        expect(df.files_hashes).toHaveLength(1);
        expect((await ws.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
        neverThePassword();
      },
    );

    phase("plans a changed step as that step's change, and rebuilds", async () => {
      ws!.write(hcl(image, "two"));
      writeFileSync(path.join(ws!.dir, "Dockerfile"), dockerfile(" && echo changed"));
      const plan = await ws!.tf("plan", "-input=false");
      expect(plan.output).toContain("sandboxiac_template.img will be updated in-place");
      expect(plan.output).toContain('~ "echo one > /tmp/message" -> "echo two > /tmp/message"');
      expect(plan.output).toContain("sandboxiac_template.df will be updated in-place");
      expect(plan.output).toMatch(/-\s+RUN cat \/app\/hello.txt\n/);
      expect(plan.output).toMatch(/\+\s+RUN cat \/app\/hello.txt && echo changed/);
      const applied = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(applied.output).toContain("Resources: 0 added, 2 changed, 0 destroyed");
      expect((await ws!.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
      neverThePassword();
    });

    phase("imports both back by id, with min_free_disk_mb and the image digest", async () => {
      const img = ws!.resource("sandboxiac_template.img")!;
      const df = ws!.resource("sandboxiac_template.df")!;
      await ws!.tf("state", "rm", "sandboxiac_template.img", "sandboxiac_template.df");
      for (const [address, id] of [
        ["sandboxiac_template.img", img.template_id],
        ["sandboxiac_template.df", df.template_id],
      ] as const) {
        const imported = await ws!.tf("import", "-input=false", address, id as string);
        expect(imported.output).toContain("Import successful!");
      }
      expect(ws!.resource("sandboxiac_template.img")).toMatchObject({
        template_id: img.template_id,
        name: "tf-from-image",
        min_free_disk_mb: 64,
        build_id: img.build_id,
        image_digest: img.image_digest,
      });
      expect(ws!.resource("sandboxiac_template.df")).toMatchObject({
        template_id: df.template_id,
        name: "tf-from-dockerfile",
        build_id: df.build_id,
      });
      neverThePassword();
    });

    phase("destroys both", async () => {
      const destroyed = await ws!.tf("destroy", "-auto-approve", "-input=false");
      expect(destroyed.code).toBe(0);
      const names = ((await tf.svc.call("GET", "/templates")).body as Array<{ names: string[] }>)
        .flatMap((t) => t.names)
        .filter((n) => n.startsWith("tf-from"));
      expect(names).toEqual([]);
      neverThePassword();
    });
  });
});
