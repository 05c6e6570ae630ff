/**
 * Volume and Secret with the real terraform binary against the local
 * service: create, no changes, in-place update (a seed file's content, a
 * secret's value), out-of-band deletion, import by id, destroy; a
 * provisioner's sandbox mounts the volume. Skipped (and said so) where
 * terraform is not on PATH.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { volumeFile } from "../pulumi/support";
import { phases } from "../support/phases";
import type { Workspace } from "./workspace";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform volume/secret scenario is",
);

// Sized to the work, as the other Terraform files are: each test runs several
// terraform commands (init, applies with sandboxes and builds, destroy), which
// can take longer than the 120 s default on a loaded machine.
jest.setTimeout(300_000);

const VALUE_1 = "tf-secret-value-one-5a4b3c";
const VALUE_2 = "tf-secret-value-two-6d5e4f";

const HCL = `${REQUIRED_PROVIDERS}variable "secret_value" {
  type      = string
  sensitive = true
}
resource "sandboxiac_volume" "v" {
  name  = "tf-vol"
  files = [{ source = "seed.txt", destination = "/seed.txt" }]
}
resource "sandboxiac_provisioner" "p" {
  template      = "base"
  volume_mounts = [{ name = sandboxiac_volume.v.name, path = "/mnt/vol" }]
  commands      = [{ run = "cp /mnt/vol/seed.txt /mnt/vol/copy.txt" }]
}
resource "sandboxiac_secret" "s" {
  name     = "tf-key"
  value    = var.secret_value
  metadata = { owner = "terraform" }
}
`;

describeWithTerraform(`terraform volume and secret (${version ?? "no terraform"})`, () => {
  let ws: Workspace | undefined;
  const tf = terraformFixture();

  describe("one scenario, phase by phase", () => {
    const phase = phases();
    const setValue = (v: string) =>
      writeFileSync(path.join(ws!.dir, "terraform.tfvars"), `secret_value = "${v}"\n`);
    let volumeID: string;
    let newVolumeID: string;

    phase("creates the volume (seeded), its copy and the secret, and plans clean", async () => {
      ws = tf.workspace(HCL);
      setValue(VALUE_1);
      writeFileSync(path.join(ws.dir, "seed.txt"), "seed v1\n");
      await ws.init();
      const created = await ws.tf("apply", "-auto-approve", "-input=false");
      expect(created.output).toContain("Resources: 3 added");
      volumeID = ws.resource("sandboxiac_volume.v")!.volume_id as string;
      expect(await volumeFile(tf.svc, volumeID, "/seed.txt")).toBe("seed v1\n");
      expect(await volumeFile(tf.svc, volumeID, "/copy.txt")).toBe("seed v1\n");
      const secret = ws.resource("sandboxiac_secret.s")!;
      expect(secret).toMatchObject({ name: "tf-key", current_version: 1 });
      expect((await ws.tf("plan", "-detailed-exitcode", "-input=false")).code).toBe(0);
    });

    phase("uploads a changed seed file in place", async () => {
      // A changed seed file: the new digest is in the plan, apply uploads it in place.
      writeFileSync(path.join(ws!.dir, "seed.txt"), "seed v2\n");
      const edited = await ws!.tf("plan", "-input=false");
      expect(edited.output).toContain("sandboxiac_volume.v will be updated in-place");
      const applied = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(applied.output).toContain("Resources: 0 added, 1 changed, 0 destroyed");
      expect(ws!.resource("sandboxiac_volume.v")!.volume_id).toBe(volumeID);
      expect(await volumeFile(tf.svc, volumeID, "/seed.txt")).toBe("seed v2\n");
    });

    phase("updates the secret in place to a new version, never printing the value", async () => {
      // A new secret value: updated in place (a new version), the value never printed.
      setValue(VALUE_2);
      const plan2 = await ws!.tf("plan", "-input=false");
      expect(plan2.output).toContain("sandboxiac_secret.s will be updated in-place");
      expect(plan2.output).toContain("(sensitive value)");
      await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(ws!.resource("sandboxiac_secret.s")!.current_version).toBe(2);
      for (const out of ws!.outputs) {
        expect(out).not.toContain(VALUE_1);
        expect(out).not.toContain(VALUE_2);
      }
    });

    phase("plans the volume deleted out of band for creation, and re-creates it", async () => {
      // Out of band: the volume deleted behind Terraform's back is planned for creation again.
      expect((await tf.svc.call("DELETE", `/volumes/${volumeID}`)).status).toBe(204);
      const drift = await ws!.tf("plan", "-detailed-exitcode", "-input=false");
      expect(drift.code).toBe(2);
      expect(drift.output).toContain("sandboxiac_volume.v will be created");
      await ws!.tf("apply", "-auto-approve", "-input=false");
      newVolumeID = ws!.resource("sandboxiac_volume.v")!.volume_id as string;
      expect(newVolumeID).not.toBe(volumeID);
      expect(await volumeFile(tf.svc, newVolumeID, "/seed.txt")).toBe("seed v2\n");
    });

    phase("imports the volume and the secret back by id", async () => {
      // Import by id: forget the volume and the secret, import them back.
      const secretID = ws!.resource("sandboxiac_secret.s")!.secret_id as string;
      await ws!.tf("state", "rm", "sandboxiac_volume.v", "sandboxiac_secret.s");
      const imported = await ws!.tf("import", "-input=false", "sandboxiac_volume.v", newVolumeID);
      expect(imported.output).toContain("Import successful!");
      expect(ws!.resource("sandboxiac_volume.v")).toMatchObject({
        id: newVolumeID,
        volume_id: newVolumeID,
        name: "tf-vol",
      });
      const importedSecret = await ws!.tf(
        "import",
        "-input=false",
        "sandboxiac_secret.s",
        secretID,
      );
      expect(importedSecret.output).toContain("Import successful!");
      expect(ws!.resource("sandboxiac_secret.s")).toMatchObject({ id: secretID, name: "tf-key" });
    });

    phase("destroys everything", async () => {
      const destroyed = await ws!.tf("destroy", "-auto-approve", "-input=false");
      expect(destroyed.code).toBe(0);
      expect((await tf.svc.call("GET", "/volumes")).body).toEqual([]);
      expect((await tf.svc.call("GET", "/secrets")).body).toEqual([]);
    });
  });
});
