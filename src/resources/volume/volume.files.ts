/**
 * The seed files of a Volume: their content hashes (computed by streaming
 * each local file, never reading it whole) and the upload of the ones that
 * changed.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import * as path from "node:path";
import { Readable } from "node:stream";
import type { ControlClient, VolumeRef } from "../../client/control";
import { SandboxIacError } from "../../errors";
import { unlessNotFound } from "../core/not-found";
import type { VolumeInputs } from "./volume.args";

/** The digest of each declared destination: `sha256:<hex>/<mode octal>`. */
export async function fileDigestOf(
  files: VolumeInputs["files"],
  baseDir: string,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of files ?? []) {
    const hash = createHash("sha256");
    const source = path.resolve(baseDir, f.source);
    try {
      for await (const chunk of createReadStream(source)) hash.update(chunk as Buffer);
    } catch (err) {
      throw new SandboxIacError(
        "invalid_argument",
        `files[].source ${JSON.stringify(f.source)} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); give a readable local file relative to ${baseDir}`,
        { operation: "Volume.files", field: "files", cause: err },
      );
    }
    out[f.destination] = `sha256:${hash.digest("hex")}/${(f.mode ?? 0o644).toString(8)}`;
  }
  return out;
}

/**
 * Uploads every declared file whose digest differs from `previous` and
 * removes destinations no longer declared. Returns the new digest.
 */
export async function syncSeedFiles(
  client: ControlClient,
  vol: VolumeRef,
  files: VolumeInputs["files"],
  previous: Record<string, string>,
  baseDir: string,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<Record<string, string>> {
  const options = signal ? { signal } : {};
  const next = await fileDigestOf(files, baseDir);
  for (const f of files ?? []) {
    if (previous[f.destination] === next[f.destination]) continue;
    const body = Readable.toWeb(
      createReadStream(path.resolve(baseDir, f.source)),
    ) as unknown as ReadableStream<Uint8Array>;
    await client.writeVolumeFile(vol, f.destination, body, { force: true, mode: f.mode }, options);
    log(`volume ${vol.volumeID}: uploaded ${f.destination}`);
  }
  for (const gone of Object.keys(previous)) {
    if (gone in next) continue;
    await unlessNotFound(client.removeVolumePath(vol, gone, options), undefined);
    log(`volume ${vol.volumeID}: removed ${gone}`);
  }
  return next;
}
