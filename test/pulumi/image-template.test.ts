/**
 * A Template built from a private registry's image, and one from a Dockerfile,
 * through Pulumi (test/harness) against the local service, the registry
 * password given as a plain config string: the checkpoint holds it only as a
 * secret (the rest of `build` in clear), the build reports the image digest,
 * reading a template from its id alone (an import's read) gives its
 * minFreeDiskMb back, a preview names each changed step by its path, the
 * changes update both templates, and nothing prints the password.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { checkpointText, destroy, isSecret, preview, readState, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";
import * as providerRuntime from "../../src/pulumi/provider-runtime";
import { makeBusyboxImage, startRegistry, type TestRegistry } from "../support/registry";

jest.setTimeout(600_000);

const AUTH = { username: "pulumi-user", password: "pulumi-registry-pw-3e7a91" };

const stack = pulumiStack("image-template", {
  destroyAfter: true,
  prepare: (root) => {
    mkdirSync(path.join(root, "app"));
    writeFileSync(path.join(root, "app", "hello.txt"), "hello\n");
  },
});

// FROM E2B's base: offline, the service builds it on the built-in base (as the Terraform scenario).
const dockerfile = (extra: string) =>
  `FROM e2bdev/base\nCOPY *.txt /app/\nRUN cat /app/hello.txt${extra}\n`;

describe("templates from a private image and from a Dockerfile through Pulumi", () => {
  const phase = phases();
  let registry: TestRegistry | undefined;
  let work: string;
  let image: string;
  const opts = (step: string, dockerfileExtra = "") =>
    stackOptions(stack.svc, stack.dir, {
      image,
      registryUser: AUTH.username,
      registryPassword: AUTH.password,
      step,
      dockerfile: dockerfile(dockerfileExtra),
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
    "builds both, keeping the password a secret in the checkpoint and out of every log",
    async () => {
      const created = await up(stack.dir, opts("echo one > /tmp/m"));
      expect(ops(created)).toEqual(["create from-image", "create from-dockerfile"]);
      expect(created.outputs["buildStatus"]).toBe("ready");
      expect(created.outputs["dockerfileFilesHashes"]).toHaveLength(1);
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

  phase("reads it back from its id alone, as an import does, with its minFreeDiskMb", async () => {
    // The Node plugin cannot serve an import (its Read needs the serialized provider from state,
    // docs/pulumi-provider.md#engine-harness): this is the call its Read makes, in process.
    const res = readState(opts("").stateFile).resources.find((r) =>
      r.urn.endsWith("::from-image"),
    )!;
    const read = await providerRuntime.read(
      "Template",
      { apiKey: stack.svc.apiKey, apiUrl: stack.svc.apiUrl },
      res.id,
      {},
    );
    expect(read.id).toBe(res.id);
    expect(read.props).toMatchObject({
      name: "pulumi-from-image",
      minFreeDiskMb: 64,
      templateID: res.id,
      buildID: res.outputs["buildID"],
      imageDigest: res.outputs["imageDigest"],
      buildStatus: "ready",
    });
    // The build definition is not reported by the control API (template.md says so).
    expect(read.props["build"]).toBeUndefined();
    expect(JSON.stringify(read)).not.toContain(AUTH.password);
  });

  phase(
    "sees no change on the next up, previews a changed step by its path, and updates",
    async () => {
      expect(ops(await up(stack.dir, opts("echo one > /tmp/m")))).toEqual([
        "same from-image",
        "same from-dockerfile",
      ]);
      const previewed = await preview(stack.dir, opts("echo two > /tmp/m", " && echo changed"));
      expect(ops(previewed)).toEqual(["update from-image", "update from-dockerfile"]);
      expect(previewed.diagnostics.map((d) => d.message)).toEqual(
        expect.arrayContaining([
          "Template pulumi-from-image: plan: update in place (build.steps[0].run)",
          "Template pulumi-from-dockerfile: plan: update in place (build.dockerfile)",
        ]),
      );
      const changed = await up(stack.dir, opts("echo two > /tmp/m", " && echo changed"));
      expect(ops(changed)).toEqual(["update from-image", "update from-dockerfile"]);
      expect(JSON.stringify([changed.log, changed.diagnostics, changed.errors])).not.toContain(
        AUTH.password,
      );
    },
  );

  phase("destroys both", async () => {
    const destroyed = await destroy(stack.dir, opts("echo two > /tmp/m", " && echo changed"));
    expect(ops(destroyed).sort()).toEqual(["delete from-dockerfile", "delete from-image"]);
    expect(destroyed.state.resources).toEqual([]);
  });
});
