/**
 * A Template built from a private registry's image through Pulumi
 * (test/harness) against the local service, the registry password given as a
 * plain config string: the checkpoint holds it only as a secret (the rest of
 * `build` in clear), the build reports the image digest, a changed step
 * updates the template, and nothing prints the password.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { checkpointText, destroy, isSecret, readState, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";
import { makeBusyboxImage, startRegistry, type TestRegistry } from "../support/registry";

jest.setTimeout(600_000);

const AUTH = { username: "pulumi-user", password: "pulumi-registry-pw-3e7a91" };

const stack = pulumiStack("image-template", { destroyAfter: true });

describe("a template from a private image through Pulumi", () => {
  const phase = phases();
  let registry: TestRegistry | undefined;
  let work: string;
  let image: string;
  const opts = (step: string) =>
    stackOptions(stack.svc, stack.dir, {
      image,
      registryUser: AUTH.username,
      registryPassword: AUTH.password,
      step,
    });

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), "pulumi-images-"));
    registry = await startRegistry(AUTH);
    await registry.push(await makeBusyboxImage(work), "private/busy:v1");
    image = `${registry.host}/private/busy:v1`;
  }, 120_000);
  afterAll(async () => {
    await registry?.close();
    rmSync(work, { recursive: true, force: true });
  });

  phase(
    "builds it, keeping the password a secret in the checkpoint and out of every log",
    async () => {
      const created = await up(stack.dir, opts("echo one > /tmp/m"));
      expect(ops(created)).toEqual(["create from-image"]);
      expect(created.outputs["buildStatus"]).toBe("ready");
      expect(created.outputs["imageDigest"]).toMatch(/^sha256:[0-9a-f]{64}$/);
      const state = readState(opts("").stateFile);
      expect(checkpointText(state)).not.toContain(AUTH.password);
      const res = state.resources.find((r) => r.urn.endsWith("::from-image"))!;
      type Build = {
        fromImage: string;
        fromImageRegistry: { username: string; password: unknown };
      };
      for (const props of [res.inputs, res.outputs]) {
        const build = props["build"] as Build;
        expect(build.fromImage).toBe(image);
        expect(build.fromImageRegistry.username).toBe(AUTH.username);
        expect(isSecret(build.fromImageRegistry.password)).toBe(true);
      }
      // (The harness's own copy of the state holds secrets unwrapped: only what is printed is checked.)
      expect(JSON.stringify([created.log, created.diagnostics, created.errors])).not.toContain(
        AUTH.password,
      );
    },
  );

  phase("sees no change on the next up, and updates on a changed step", async () => {
    expect(ops(await up(stack.dir, opts("echo one > /tmp/m")))).toEqual(["same from-image"]);
    const changed = await up(stack.dir, opts("echo two > /tmp/m"));
    expect(ops(changed)).toEqual(["update from-image"]);
    expect(JSON.stringify([changed.log, changed.diagnostics, changed.errors])).not.toContain(
      AUTH.password,
    );
  });

  phase("destroys it", async () => {
    expect((await destroy(stack.dir, opts("echo two > /tmp/m"))).state.resources).toEqual([]);
  });
});
