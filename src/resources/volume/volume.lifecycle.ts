/**
 * The Volume resource: a persistent volume that outlives sandboxes, with
 * optional seed files synced by content hash. Sandboxes mount it by name
 * (Provisioner `volumeMounts`).
 *
 * @module
 */
import { createControlClient } from "../../client/control";
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import { unlessNotFound } from "../core/not-found";
import {
  volumeArgsSchema,
  volumeChangeRules,
  type VolumeInputs,
  type VolumeOutputs,
} from "./volume.args";
import { fileDigestOf, syncSeedFiles } from "./volume.files";

function clientOf(ctx: ResourceContext) {
  return createControlClient({ config: ctx.config, log: ctx.log });
}

function assertDistinct(inputs: VolumeInputs): void {
  const seen = new Set<string>();
  for (const f of inputs.files ?? []) {
    if (seen.has(f.destination))
      throw new SandboxIacError(
        "invalid_argument",
        `files: destination ${JSON.stringify(f.destination)} is listed twice; give each file its own destination`,
        { operation: "Volume.check", field: "files" },
      );
    seen.add(f.destination);
  }
}

/** The Volume lifecycle. */
export const volumeLifecycle: ResourceLifecycle<VolumeInputs, VolumeOutputs> = {
  typeName: "Volume",
  check(news, options) {
    const result = checkWithSchema(volumeArgsSchema, news, options);
    if (result.inputs) {
      try {
        assertDistinct(result.inputs);
      } catch (err) {
        return {
          failures: [
            {
              property: "files",
              reason: SandboxIacError.from(err, { operation: "volume.check" }).reason,
            },
          ],
        };
      }
    }
    return result;
  },
  async diff(olds, news, options) {
    const result = diffByRules(olds, news, volumeChangeRules, options);
    // Same declaration, different local content: the files are synced again.
    if (!result.updates.includes("files") && !result.replaces.includes("name")) {
      const digest = await fileDigestOf(news.files, options.baseDir);
      if (JSON.stringify(digest) !== JSON.stringify(olds.fileDigest ?? {})) {
        return { ...result, changes: true, updates: [...result.updates, "files"] };
      }
    }
    return result;
  },
  async planOutputs(inputs, options) {
    return { fileDigest: await fileDigestOf(inputs.files, options.baseDir) };
  },
  async create(inputs, ctx) {
    const client = clientOf(ctx);
    const options = ctx.signal ? { signal: ctx.signal } : {};
    // Hash first: an unreadable source fails before anything is created.
    await fileDigestOf(inputs.files, ctx.baseDir);
    const vol = await client.createVolume(inputs.name, options);
    try {
      const fileDigest = await syncSeedFiles(
        client,
        vol,
        inputs.files,
        {},
        ctx.baseDir,
        ctx.log,
        ctx.signal,
      );
      ctx.log(`volume ${vol.name} created (${vol.volumeID})`);
      return { id: vol.volumeID, outputs: { ...inputs, volumeID: vol.volumeID, fileDigest } };
    } catch (err) {
      // All or nothing: a volume whose seeding failed is removed again.
      await client.deleteVolume(vol.volumeID).catch(() => undefined);
      throw err;
    }
  },
  async read(id, olds, ctx) {
    const client = clientOf(ctx);
    const options = ctx.signal ? { signal: ctx.signal } : {};
    const vol = await unlessNotFound(client.getVolume(id, options), undefined);
    if (!vol) return undefined;
    const inputs: VolumeInputs = olds
      ? { name: vol.name, ...(olds.files ? { files: olds.files } : {}) }
      : { name: vol.name };
    return {
      id,
      outputs: { ...inputs, volumeID: vol.volumeID, fileDigest: olds?.fileDigest ?? {} },
    };
  },
  async update(id, olds, news, ctx) {
    const client = clientOf(ctx);
    const options = ctx.signal ? { signal: ctx.signal } : {};
    const vol = await client.getVolume(id, options);
    const fileDigest = await syncSeedFiles(
      client,
      vol,
      news.files,
      olds.fileDigest ?? {},
      ctx.baseDir,
      ctx.log,
      ctx.signal,
    );
    return { ...news, volumeID: id, fileDigest };
  },
  async delete(id, _olds, ctx) {
    await unlessNotFound(clientOf(ctx).deleteVolume(id), undefined);
  },
};
