/**
 * Pulls a container image with Debian's `skopeo` into an OCI layout
 * directory, and reads its manifest and config from there. skopeo speaks the
 * registry protocol (anonymous, basic and bearer-token auth, manifest lists,
 * Docker schema 2 and OCI manifests, mirrors from registries.conf), so none
 * of it is written here.
 *
 * Credentials never reach a command line (`/proc/<pid>/cmdline` is readable
 * by every local user): they go into an auth file (mode 0600, in the pull's
 * own 0700 directory, removed with it). Without credentials skopeo reads the
 * user's own auth file, so `docker login` / `skopeo login` on the service's
 * host works.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import type { LayerCompression } from "../../runtime/image-layers";
import type { ImageRef } from "./image-ref";
import { remoteLayers } from "./image-manifest";
import { followPull } from "./image-progress";
import { ImagePullError, PLATFORM, runSkopeo } from "./image-skopeo";

export { ImagePullError } from "./image-skopeo";

/** Username and password for a registry (`fromImageRegistry` of type `registry`). */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** One layer of a pulled image. */
interface PulledLayer {
  digest: string;
  size: number;
  compression: LayerCompression;
  /** The blob file in the OCI layout (empty when the layer was not downloaded). */
  blob: string;
  /** False when the layer was already unpacked and so not downloaded. */
  downloaded: boolean;
}

/** A pulled image: its layers (lowest first) and the parts of its config builds use. */
export interface PulledImage {
  /** The manifest's digest, which pins what the tag pointed at. */
  digest: string;
  layers: PulledLayer[];
  /** `config.Env`, in order. */
  env: string[];
  workingDir: string | undefined;
  user: string | undefined;
  /** Bytes downloaded (the layers not unpacked before). */
  downloadedBytes: number;
}

/** Options of {@link pullImage}. */
export interface PullOptions {
  ref: ImageRef;
  credentials?: RegistryCredentials | undefined;
  /** Allow plain HTTP and unverified TLS for this registry. */
  insecure: boolean;
  /** An empty 0700 directory the pull may fill (removed by the caller). */
  dir: string;
  /** Whether the layer of digest `sha256:…` is unpacked already: it is then not downloaded. */
  isUnpacked?: ((digest: string) => Promise<boolean>) | undefined;
  /** Receives progress lines. */
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

/**
 * Pulls `opts.ref` into `opts.dir` and reads what it got. The layers already
 * unpacked are not downloaded: the registry's manifest is read first, and each
 * such layer gets an empty stand-in blob in the layout, which skopeo's OCI
 * destination takes as present (it only checks the blob file exists) and
 * skips. The layout's manifest still lists every layer.
 */
export async function pullImage(opts: PullOptions): Promise<PulledImage> {
  const layout = path.join(opts.dir, "oci");
  const global = [
    "--insecure-policy",
    "--override-os",
    PLATFORM.os,
    "--override-arch",
    PLATFORM.architecture,
  ];
  let authfile: string | undefined;
  if (opts.credentials) {
    authfile = path.join(opts.dir, "auth.json");
    const auth = Buffer.from(`${opts.credentials.username}:${opts.credentials.password}`).toString(
      "base64",
    );
    await fs.writeFile(authfile, JSON.stringify({ auths: { [opts.ref.registry]: { auth } } }), {
      mode: 0o600,
    });
  }
  const run = {
    ref: opts.ref,
    secrets: opts.credentials ? [opts.credentials.password] : [],
    credentialsGiven: opts.credentials !== undefined,
    signal: opts.signal,
  };
  const tls = opts.insecure ? ["--tls-verify=false"] : [];
  const remote = await remoteLayers(opts.ref, (target) =>
    runSkopeo(
      [
        ...global,
        "inspect",
        "--raw",
        ...tls,
        ...(authfile ? ["--authfile", authfile] : []),
        `docker://${target}`,
      ],
      run,
    ),
  );
  const skipped = new Set<string>();
  if (remote && opts.isUnpacked) {
    const blobs = path.join(layout, "blobs", "sha256");
    await fs.mkdir(blobs, { recursive: true });
    for (const l of remote) {
      if (skipped.has(l.digest) || !(await opts.isUnpacked(l.digest))) continue;
      await fs.writeFile(path.join(blobs, l.digest.slice("sha256:".length)), "");
      skipped.add(l.digest);
    }
  }
  const follower = followPull({
    layout,
    layers: remote?.map((l) => ({ ...l, skipped: skipped.has(l.digest) })),
    log: opts.log,
  });
  let downloadedBytes: number;
  try {
    await runSkopeo(
      [
        ...global,
        "copy",
        ...(opts.insecure ? ["--src-tls-verify=false"] : []),
        ...(authfile ? ["--src-authfile", authfile] : []),
        `docker://${opts.ref.full}`,
        `oci:${layout}:image`,
      ],
      { ...run, onLine: (line) => follower.onLine(line) },
    );
  } finally {
    downloadedBytes = await follower.stop();
  }
  const image = await readLayout(layout, opts.ref, skipped);
  return { ...image, downloadedBytes };
}

interface OciDescriptor {
  mediaType?: string;
  digest?: string;
  size?: number;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

async function readLayout(
  layout: string,
  ref: ImageRef,
  skipped: ReadonlySet<string>,
): Promise<Omit<PulledImage, "downloadedBytes">> {
  const blobPath = (d: OciDescriptor | undefined): string => {
    if (!d?.digest || !DIGEST.test(d.digest))
      throw new ImagePullError("other", `image ${ref.full}: a descriptor has no sha256 digest`);
    return path.join(layout, "blobs", "sha256", d.digest.slice("sha256:".length));
  };
  const json = async (file: string) => JSON.parse(await fs.readFile(file, "utf8")) as unknown;
  const index = (await json(path.join(layout, "index.json"))) as { manifests?: OciDescriptor[] };
  const manifestDesc = index.manifests?.[0];
  const manifest = (await json(blobPath(manifestDesc))) as {
    config?: OciDescriptor;
    layers?: OciDescriptor[];
  };
  const config = (await json(blobPath(manifest.config))) as {
    architecture?: string;
    os?: string;
    config?: { Env?: string[] | null; WorkingDir?: string; User?: string };
  };
  if (
    (config.architecture && config.architecture !== PLATFORM.architecture) ||
    (config.os && config.os !== PLATFORM.os)
  ) {
    throw new ImagePullError(
      "platform",
      `image ${ref.full} is for ${config.os ?? "?"}/${config.architecture ?? "?"}: the local service runs ${PLATFORM.os}/${PLATFORM.architecture} images only`,
    );
  }
  const layers = (manifest.layers ?? []).map((d) => ({
    digest: d.digest!,
    size: d.size ?? 0,
    compression: compressionOf(d.mediaType ?? "", ref),
    blob: blobPath(d),
    downloaded: !skipped.has(d.digest!),
  }));
  return {
    digest: manifestDesc!.digest!,
    layers,
    env: config.config?.Env ?? [],
    workingDir: config.config?.WorkingDir || undefined,
    user: config.config?.User || undefined,
  };
}

function compressionOf(mediaType: string, ref: ImageRef): LayerCompression {
  if (/gzip$/.test(mediaType)) return "gzip";
  if (/zstd$/.test(mediaType)) return "zstd";
  if (/tar$/.test(mediaType)) return "none";
  throw new ImagePullError(
    "other",
    `image ${ref.full} has a layer of media type ${JSON.stringify(mediaType)}: the local service unpacks tar layers (plain, gzip or zstd)`,
  );
}
