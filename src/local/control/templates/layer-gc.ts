/**
 * Garbage collection of stored layers: every layer under `layers/` (captured
 * steps, snapshots, image layers and images' conventions layers) that no
 * template build, running build, step cache entry or recorded sandbox needs
 * is deleted, and the bytes reclaimed are logged. This also removes what a
 * `kill -9` left between copying a layer into place and recording it.
 *
 * It runs when the service starts, after a build ends and after a template
 * is deleted; runs never overlap. At start every layer on disk is a
 * candidate; later runs only consider layers that were recorded (in the
 * catalog or the step cache) at some point, so that a layer being made (a
 * snapshot's capture, before it is recorded) is never taken for garbage.
 *
 * @module
 */
import { layerDiskBytes, listLayers } from "../../runtime/layers";
import type { SandboxRuntime } from "../../runtime/types";
import { SandboxIacError } from "../../../errors";
import { recordedLayers } from "../sandboxes/restore";

/** What {@link LayerCollector} asks of the rest of the templates side. */
export interface LayerCollectorDeps {
  dataDir: string;
  runtime: SandboxRuntime;
  log: (line: string) => void;
  /** Layers templates, running builds and the step cache need, read at the moment of each deletion. */
  inUse: () => Set<string>;
  /**
   * True while a build pulls an image: the layers it unpacks are not recorded
   * anywhere yet, so image layers are left alone meanwhile.
   */
  pulling: () => boolean;
  /** Awaited before each deletion (sandboxes kept ahead of time let go of the layer). */
  releaseListeners: readonly ((layerId: string) => Promise<void>)[];
}

/** Outcome of one collection. */
export interface CollectionResult {
  layers: number;
  bytes: number;
}

/** Image layers (`oci…`) and their conventions layers (`e2b…`): written by pulls. */
const IMAGE_LAYER = /^(oci|e2b)[0-9a-f]{56}$/;

/** Deletes unused layers, one collection at a time. */
export class LayerCollector {
  private chain: Promise<unknown> = Promise.resolve();
  /** Layers recorded at some point since the start: candidates once nothing needs them. */
  private readonly recorded = new Set<string>();

  constructor(private readonly deps: LayerCollectorDeps) {}

  /** Notes layers the catalog or the cache records (called as they are persisted). */
  markRecorded(layers: Iterable<string>): void {
    for (const l of layers) this.recorded.add(l);
  }

  /**
   * Deletes every layer nothing needs and logs how many bytes that reclaimed
   * (`why` says what triggered it). With `all`, layers never recorded are
   * candidates too (only at start, when nothing is being made).
   */
  collect(why: string, opts: { all?: boolean } = {}): Promise<CollectionResult> {
    const run = this.chain.then(() => this.sweep(why, opts.all ?? false));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async sweep(why: string, all: boolean): Promise<CollectionResult> {
    const { dataDir, runtime, log } = this.deps;
    const result: CollectionResult = { layers: 0, bytes: 0 };
    const sandboxLayers = new Set(await recordedLayers(dataDir));
    for (const layer of await listLayers(dataDir)) {
      // Read now, not before the listing: a build may have recorded a layer meanwhile.
      if (!all && !this.recorded.has(layer)) continue;
      if (sandboxLayers.has(layer) || this.deps.inUse().has(layer)) continue;
      if (IMAGE_LAYER.test(layer) && this.deps.pulling()) continue;
      try {
        const bytes = await layerDiskBytes(dataDir, layer);
        if (this.deps.inUse().has(layer)) continue;
        for (const listener of this.deps.releaseListeners) await listener(layer);
        await runtime.deleteLayer(layer);
        this.recorded.delete(layer);
        result.layers += 1;
        result.bytes += bytes;
      } catch (err) {
        log(
          `templates: could not delete unused layer ${layer}: ${SandboxIacError.from(err, { operation: "templates.gc" }).reason}`,
        );
      }
    }
    if (result.layers > 0) {
      log(
        `templates: garbage collection (${why}) deleted ${result.layers} unused layers, reclaimed ${result.bytes} bytes (${formatBytes(result.bytes)})`,
      );
    }
    return result;
  }
}

/** `1.5 MiB`-style figure for logs. */
function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}
