/**
 * The base of a build from a container image (`fromImage`): the image pulled
 * and its layers stored, recorded on the build while they are in use; E2B's
 * own base image falls back to the built-in `base` when its registry cannot
 * be reached (offline).
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateCatalog } from "./catalog";
import { BASE_TEMPLATE_ID, BUILD_STEP } from "./constants";
import type { BuildRecord, LogLevel } from "./model";
import type { ResolvedTemplate } from "./lookup";
import { StepFailure } from "./build-steps";
import { E2B_BASE_IMAGE, prepareImageBase, type ImageSource } from "./image-source";
import { ImagePullError } from "./image-pull";

/** What a build sandbox starts from: a template's build, or an image's layers. */
export type BuildBase = Pick<
  ResolvedTemplate,
  "layers" | "envs" | "defaultUser" | "defaultWorkdir"
> & {
  /** The pulled manifest's digest, for a build from an image. */
  digest?: string;
};

/** What {@link imageBase} needs of the build runner. */
export interface ImageBaseDeps {
  catalog: TemplateCatalog;
  runtime: SandboxRuntime;
  /** Registries (`host:port`) pulled over plain HTTP besides loopback ones. */
  insecureRegistries: readonly string[];
}

/**
 * Pulls `image` and stores its layers for build `b`; a pull that fails ends
 * the build with the pull's own message (a {@link StepFailure}), except E2B's
 * base image out of reach, which builds on the built-in base with a warning.
 */
export async function imageBase(
  deps: ImageBaseDeps,
  image: ImageSource,
  b: BuildRecord,
  logLine: (level: LogLevel, message: string, step?: string) => void,
  cancelled: AbortSignal,
): Promise<BuildBase> {
  const { catalog } = deps;
  try {
    // Layers being unpacked are recorded nowhere: garbage collection leaves image layers alone meanwhile.
    catalog.pulls++;
    let base: BuildBase;
    try {
      base = await prepareImageBase({
        source: image,
        runtime: deps.runtime,
        insecureRegistries: deps.insecureRegistries,
        log: (line) => logLine("info", line, BUILD_STEP.base),
        signal: cancelled,
      });
      // The build sandbox's layers are in use from now on: a concurrent delete must keep them.
      b.parentLayers = [...base.layers];
      // What the tag pointed at when pulled: clients show it, so a moved tag can be seen.
      if (base.digest) b.imageDigest = base.digest;
    } finally {
      catalog.pulls--;
    }
    await catalog.save();
    return base;
  } catch (err) {
    if (!(err instanceof ImagePullError)) throw err;
    const fallback =
      err.kind === "unreachable" && image.ref.full.startsWith(`${E2B_BASE_IMAGE}:`)
        ? catalog.resolve(BASE_TEMPLATE_ID)
        : undefined;
    if (!fallback) throw new StepFailure(err.message);
    logLine(
      "warn",
      `${err.message}: building on the built-in base template instead (see the README for what it has)`,
      BUILD_STEP.base,
    );
    b.parentLayers = [...fallback.layers];
    await catalog.save();
    return fallback;
  }
}
