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
import { spawn } from "node:child_process";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import * as readline from "node:readline";
import { diesWithService } from "../../runtime/layer-copy";
import type { LayerCompression } from "../../runtime/image-layers";
import type { ImageRef } from "./image-ref";

/** The only platform the local service runs. */
const PLATFORM = { os: "linux", architecture: "amd64" } as const;
/** Longest tail of skopeo's stderr kept for error messages. */
const STDERR_KEEP = 4000;

/** Username and password for a registry (`fromImageRegistry` of type `registry`). */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** What went wrong with a pull, for the message and the offline fallback. */
export type PullFailureKind = "auth" | "not_found" | "unreachable" | "platform" | "other";

/** A pull failed; `message` is safe to show (no password). */
export class ImagePullError extends Error {
  constructor(
    readonly kind: PullFailureKind,
    message: string,
  ) {
    super(message);
    this.name = "ImagePullError";
  }
}

/** One layer of a pulled image. */
interface PulledLayer {
  digest: string;
  size: number;
  compression: LayerCompression;
  /** The blob file in the OCI layout. */
  blob: string;
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
}

/** Options of {@link pullImage}. */
export interface PullOptions {
  ref: ImageRef;
  credentials?: RegistryCredentials | undefined;
  /** Allow plain HTTP and unverified TLS for this registry. */
  insecure: boolean;
  /** An empty 0700 directory the pull may fill (removed by the caller). */
  dir: string;
  /** Receives progress lines. */
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

/** Pulls `opts.ref` into `opts.dir` and reads what it got. */
export async function pullImage(opts: PullOptions): Promise<PulledImage> {
  const layout = path.join(opts.dir, "oci");
  const args = [
    "skopeo",
    "--insecure-policy",
    "--override-os",
    PLATFORM.os,
    "--override-arch",
    PLATFORM.architecture,
    "copy",
    ...(opts.insecure ? ["--src-tls-verify=false"] : []),
  ];
  if (opts.credentials) {
    const authfile = path.join(opts.dir, "auth.json");
    const auth = Buffer.from(`${opts.credentials.username}:${opts.credentials.password}`).toString(
      "base64",
    );
    await fs.writeFile(authfile, JSON.stringify({ auths: { [opts.ref.registry]: { auth } } }), {
      mode: 0o600,
    });
    args.push("--src-authfile", authfile);
  }
  args.push(`docker://${opts.ref.full}`, `oci:${layout}:image`);
  const secrets = opts.credentials ? [opts.credentials.password] : [];
  await runSkopeo(args, opts, secrets);
  return readLayout(layout, opts.ref);
}

async function runSkopeo(args: string[], opts: PullOptions, secrets: string[]): Promise<void> {
  const [file, ...rest] = diesWithService(args);
  const child = spawn(file, rest, {
    stdio: ["ignore", "pipe", "pipe"],
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_KEEP)));
  let blobs = 0;
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const blob = /^Copying blob (sha256:[0-9a-f]{12})/.exec(line);
    if (blob) opts.log(`Pulling layer ${++blobs}: ${blob[1]}`);
    else if (/^Copying config/.test(line)) opts.log("Pulling the image config");
  });
  const code = await new Promise<number | null>((resolve) => {
    child.on("close", (c) => resolve(c));
    child.on("error", () => resolve(null));
  });
  if (code === 0) return;
  if (opts.signal?.aborted) throw new ImagePullError("other", "the pull was cancelled");
  throw classify(scrub(skopeoMessage(stderr), secrets), opts);
}

/** skopeo's fatal line is `time=… level=fatal msg="…"`: the message, unquoted. */
function skopeoMessage(stderr: string): string {
  const m = /msg="((?:[^"\\]|\\.)*)"/.exec(stderr.slice(stderr.lastIndexOf("level=fatal")));
  const text = m ? m[1].replace(/\\"/g, '"').replace(/\\\\/g, "\\") : stderr.trim();
  return text || "skopeo failed without a message";
}

function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join("***");
  return out;
}

function classify(detail: string, opts: PullOptions): ImagePullError {
  const { ref } = opts;
  if (/unauthorized|authentication required|invalid username\/password|denied|401/i.test(detail)) {
    return new ImagePullError(
      "auth",
      `authentication to registry ${ref.registry} failed for image ${ref.full}: ${detail}: check the username and password of fromImage(ref, { username, password }), or run \`docker login ${ref.registry}\` on the service's host`,
    );
  }
  if (
    /no image found in (?:manifest list|image index) for architecture|choosing (?:an )?image/i.test(
      detail,
    )
  ) {
    return new ImagePullError(
      "platform",
      `image ${ref.full} has no ${PLATFORM.os}/${PLATFORM.architecture} variant: ${detail}: the local service runs ${PLATFORM.os}/${PLATFORM.architecture} images only`,
    );
  }
  if (/manifest unknown|name unknown|not found|404/i.test(detail)) {
    return new ImagePullError(
      "not_found",
      `image ${ref.full} does not exist in registry ${ref.registry}: ${detail}: check the name and tag`,
    );
  }
  if (/server gave HTTP response to HTTPS client/i.test(detail)) {
    return new ImagePullError(
      "unreachable",
      `registry ${ref.registry} speaks plain HTTP: ${detail}: start the service with --insecure-registry ${ref.registry} to allow it`,
    );
  }
  if (
    /connection refused|no such host|dial tcp|i\/o timeout|network is unreachable|no route to host|TLS handshake|connection reset|pinging container registry/i.test(
      detail,
    )
  ) {
    return new ImagePullError(
      "unreachable",
      `registry ${ref.registry} cannot be reached to pull ${ref.full}: ${detail}`,
    );
  }
  return new ImagePullError("other", `pulling ${ref.full} failed: ${detail}`);
}

interface OciDescriptor {
  mediaType?: string;
  digest?: string;
  size?: number;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

async function readLayout(layout: string, ref: ImageRef): Promise<PulledImage> {
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
