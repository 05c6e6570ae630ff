/**
 * The manifest of an image in its registry, read before the pull (with
 * `skopeo inspect --raw`) so that the pull can skip the layers the service
 * has unpacked already and can report progress against known sizes. A
 * manifest list / image index is resolved to its linux/amd64 entry, as
 * skopeo's copy resolves it.
 *
 * @module
 */
import type { ImageRef } from "./image-ref";
import { ImagePullError, PLATFORM } from "./image-skopeo";

/** A layer as the registry's manifest lists it. */
export interface RemoteLayer {
  digest: string;
  /** Bytes of the blob as stored (compressed). */
  size: number;
}

interface Descriptor {
  digest?: unknown;
  size?: unknown;
  platform?: { os?: unknown; architecture?: unknown };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The layers of `ref`'s linux/amd64 image, lowest first, or undefined when
 * the manifest is of a kind without a `layers` list (Docker schema 1): the
 * pull then downloads every layer. `inspect(target)` runs
 * `skopeo inspect --raw docker://<target>` and returns its output.
 */
export async function remoteLayers(
  ref: ImageRef,
  inspect: (target: string) => Promise<string>,
): Promise<RemoteLayer[] | undefined> {
  let manifest = parse(await inspect(ref.full), ref);
  if (Array.isArray(manifest["manifests"])) {
    const entries = manifest["manifests"] as Descriptor[];
    const entry = entries.find(
      (d) =>
        d.platform?.os === PLATFORM.os &&
        d.platform.architecture === PLATFORM.architecture &&
        typeof d.digest === "string" &&
        DIGEST.test(d.digest),
    );
    if (!entry) {
      const has = entries.map(
        (d) => `${String(d.platform?.os)}/${String(d.platform?.architecture)}`,
      );
      throw new ImagePullError(
        "platform",
        `image ${ref.full} has no ${PLATFORM.os}/${PLATFORM.architecture} variant (it has ${has.join(", ") || "none"}): the local service runs ${PLATFORM.os}/${PLATFORM.architecture} images only`,
      );
    }
    manifest = parse(
      await inspect(`${ref.registry}/${ref.repository}@${entry.digest as string}`),
      ref,
    );
  }
  const layers = manifest["layers"];
  if (!Array.isArray(layers)) return undefined;
  const out: RemoteLayer[] = [];
  for (const d of layers as Descriptor[]) {
    if (typeof d.digest !== "string" || !DIGEST.test(d.digest) || typeof d.size !== "number")
      return undefined;
    out.push({ digest: d.digest, size: d.size });
  }
  return out;
}

function parse(text: string, ref: ImageRef): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new ImagePullError(
    "other",
    `image ${ref.full}: the registry's manifest is not a JSON object`,
  );
}
