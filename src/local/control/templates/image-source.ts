/**
 * Templates built from container images: the build body's `fromImage` and
 * `fromImageRegistry` checked, and the image turned into the layers a build
 * sandbox starts from (pulled, each layer unpacked once per digest, E2B's
 * conventions on top).
 *
 * @module
 */
import * as fs from "node:fs/promises";
import type { SandboxRuntime } from "../../runtime/types";
import { DEFAULT_USER } from "../../../wire/envd";
import { serviceError } from "../http";
import { isLoopbackRegistry, parseImageRef, type ImageRef } from "./image-ref";
import {
  ImagePullError,
  pullImage,
  type PulledImage,
  type RegistryCredentials,
} from "./image-pull";
import { formatMb } from "./image-progress";

/** The image a build starts from. */
export interface ImageSource {
  /** As the user wrote it. */
  written: string;
  ref: ImageRef;
  /** Kept in memory only, for this build's pull. */
  credentials?: RegistryCredentials | undefined;
}

/** E2B's default base image (what `Template()` and `fromBaseImage()` send). */
export const E2B_BASE_IMAGE = "docker.io/e2bdev/base";

/**
 * Checks `fromImage` / `fromImageRegistry` of a build body; throws a 400 that
 * names the field (and never echoes a password).
 */
export function imageSourceOf(fromImage: string, registry: unknown): ImageSource {
  const ref = parseImageRef(fromImage);
  if (typeof ref === "string") {
    throw serviceError(
      "invalid_argument",
      `body.fromImage: ${JSON.stringify(fromImage)} is not an image reference: expected ${ref}`,
    );
  }
  if (registry === undefined || registry === null) return { written: fromImage, ref };
  const r = registry as Record<string, unknown>;
  const type = typeof r === "object" ? r["type"] : undefined;
  if (type === "aws" || type === "gcp") {
    throw serviceError(
      "invalid_argument",
      `body.fromImageRegistry.type: the local service cannot use ${type === "aws" ? "AWS ECR (fromAWSRegistry)" : "GCP Artifact Registry (fromGCPRegistry)"} credentials, got ${JSON.stringify(type)}: it supports type "registry" (fromImage(ref, { username, password })) and the service host's own \`docker login\``,
    );
  }
  if (
    type !== "registry" ||
    typeof r["username"] !== "string" ||
    typeof r["password"] !== "string"
  ) {
    throw serviceError(
      "invalid_argument",
      `body.fromImageRegistry: expected { type: "registry", username: string, password: string } (what fromImage(ref, { username, password }) sends), got type ${JSON.stringify(type ?? null)}`,
    );
  }
  return {
    written: fromImage,
    ref,
    credentials: { username: r["username"], password: r["password"] },
  };
}

/** What a build starting from an image starts from. */
export interface ImageBase {
  /** Layer ids, lowest first: the image's layers, then E2B's conventions. */
  layers: string[];
  /** The image's `Env`. */
  envs: Record<string, string>;
  defaultUser: string;
  /** The pulled manifest's digest. */
  digest: string;
}

/** Options of {@link prepareImageBase}. */
export interface PrepareImageOptions {
  source: ImageSource;
  runtime: SandboxRuntime;
  /** Registries (`host:port`) allowed over plain HTTP besides loopback ones. */
  insecureRegistries: readonly string[];
  log: (line: string) => void;
  signal?: AbortSignal | undefined;
}

/** Pulls the image and stores its layers; throws `ImagePullError` for a failed pull. */
export async function prepareImageBase(opts: PrepareImageOptions): Promise<ImageBase> {
  const { ref } = opts.source;
  const dir = await opts.runtime.pullDir();
  try {
    opts.log(`Pulling ${ref.full}`);
    const started = Date.now();
    const image: PulledImage = await pullImage({
      ref,
      credentials: opts.source.credentials,
      insecure: isLoopbackRegistry(ref.registry) || opts.insecureRegistries.includes(ref.registry),
      dir,
      isUnpacked: (digest) => opts.runtime.hasImageLayer(digest),
      log: opts.log,
      signal: opts.signal,
    });
    const total = image.layers.reduce((n, l) => n + l.size, 0);
    const fresh = image.layers.filter((l) => l.downloaded).length;
    opts.log(
      `Pulled ${ref.full} (${image.digest}): ${image.layers.length} layers, ${formatMb(total)}; ` +
        `downloaded ${fresh} (${formatMb(image.downloadedBytes)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const layers: string[] = [];
    for (const [i, l] of image.layers.entries()) {
      // Not downloaded because unpacked: gone only if deleted since the check, a race a retry wins.
      if (!l.downloaded && !(await opts.runtime.hasImageLayer(l.digest))) {
        throw new ImagePullError(
          "other",
          `layer ${l.digest} of ${ref.full} was deleted during the pull: build again`,
        );
      }
      const { layerId, reused } = await opts.runtime.importImageLayer(
        l.digest,
        l.blob,
        l.compression,
      );
      opts.log(
        `Layer ${i + 1}/${image.layers.length} ${l.digest.slice(0, 19)} (${formatMb(l.size)}): ${reused ? "already unpacked" : "unpacked"}`,
      );
      layers.push(layerId);
    }
    layers.push(await opts.runtime.imageBaseLayer(layers));
    return { layers, envs: envsOf(image.env), defaultUser: DEFAULT_USER, digest: image.digest };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function envsOf(env: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    const eq = e.indexOf("=");
    if (eq > 0) out[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return out;
}
