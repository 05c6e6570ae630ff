/**
 * The template catalog: every template, build and tag, persisted to one JSON
 * file with atomic writes, plus the look-ups sandboxes and routes need and the
 * reference counting that releases layers nobody uses any more. What it puts
 * right at each open (the built-in `base` template, builds a stop cut off) is
 * catalog-start.ts.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { layerExists } from "../../runtime/layers";
import type { SandboxRuntime } from "../../runtime/types";
import { DEFAULT_USER } from "../../../wire/envd";
import { JsonStateWriter, readStateFile } from "../state-file";
import { BuildLogStore } from "./build-logs";
import { ensureBase, recoverInterruptedBuilds } from "./catalog-start";
import {
  BUILD_LOGS_DIR,
  CATALOG_FILE,
  MAX_TAG_HISTORY,
  REPORTED_DISK_SIZE_MB,
  TEMPLATES_DIR,
} from "./constants";
import {
  catalogFileSchema,
  type BuildRecord,
  type CatalogFile,
  type TemplateRecord,
} from "./model";
import { DEFAULT_TAG, parseTemplateName } from "../../../wire/template-names";
import type { ResolvedTemplate } from "./lookup";
import { SandboxIacError } from "../../../errors";
import { LayerCollector, type CollectionResult } from "./layer-gc";
import { StepCache, type StepCacheLimits } from "./step-cache";

/** A template found by id or name, with the tag the caller asked for. */
export interface LookupResult {
  template: TemplateRecord;
  /** The tag written after `:`, when there was one. */
  tag: string | undefined;
}

/** Everything the templates side knows, and its persistence. */
export class TemplateCatalog {
  private readonly templates = new Map<string, TemplateRecord>();
  private readonly writer: JsonStateWriter;
  /** Logs of every build. */
  readonly logs: BuildLogStore;
  /** Awaited before each layer deletion (see TemplateRegistry.onLayerRelease). */
  readonly releaseListeners: ((layerId: string) => Promise<void>)[] = [];
  /** Image pulls in flight (their layers are recorded nowhere yet). */
  pulls = 0;
  private readonly collector: LayerCollector;

  private constructor(
    dir: string,
    private readonly dataDir: string,
    readonly runtime: SandboxRuntime,
    private readonly log: (line: string) => void,
    /** The step cache, shared by every template of the service. */
    readonly cache: StepCache,
  ) {
    // Compact: the catalog holds every template and build, and is rewritten often.
    this.writer = new JsonStateWriter(
      path.join(dir, CATALOG_FILE),
      () => this.snapshot(),
      undefined,
    );
    this.logs = new BuildLogStore(path.join(dir, BUILD_LOGS_DIR));
    this.collector = new LayerCollector({
      dataDir,
      runtime,
      log,
      inUse: () => this.layersInUse(),
      pulling: () => this.pulls > 0,
      releaseListeners: this.releaseListeners,
    });
  }

  /**
   * Loads the catalog from `<dataDir>/templates`, creating it on first use.
   * Builds that were running when the service stopped are marked `error` and
   * their build sandboxes destroyed; layers that no template, step cache
   * entry or recorded sandbox uses are deleted. `cacheLimits` bound the step
   * cache (each defaulted, see {@link StepCacheLimits}).
   */
  static async open(
    dataDir: string,
    runtime: SandboxRuntime,
    log: (line: string) => void,
    cacheLimits: Partial<StepCacheLimits> = {},
  ): Promise<TemplateCatalog> {
    const dir = path.join(dataDir, TEMPLATES_DIR);
    await fs.mkdir(path.join(dir, BUILD_LOGS_DIR), { recursive: true });
    const cache = await StepCache.open(dir, cacheLimits);
    const catalog = new TemplateCatalog(dir, dataDir, runtime, log, cache);
    const file = await readStateFile(path.join(dir, CATALOG_FILE), catalogFileSchema);
    for (const t of file?.templates ?? []) catalog.templates.set(t.templateID, t);
    ensureBase(catalog.templates, catalog.runtime.baseLayerId);
    await recoverInterruptedBuilds(catalog.templates, catalog.runtime, catalog.logs, catalog.log);
    await catalog.save();
    // Everything on disk is eligible now: a kill -9 may have left layers nothing recorded.
    await catalog.collector.collect("service start", { all: true });
    return catalog;
  }

  /**
   * Deletes the layers nothing uses any more (templates, running builds,
   * step cache entries, recorded sandboxes) and logs the bytes reclaimed;
   * `why` names what triggered it.
   */
  collectGarbage(why: string): Promise<CollectionResult> {
    return this.collector.collect(why);
  }

  private snapshot(): CatalogFile {
    this.collector.markRecorded(this.layersInUse());
    return { version: 1, templates: [...this.templates.values()] };
  }

  /** Persists the catalog; resolves once the current state is durable. */
  save(): Promise<void> {
    return this.writer.flush();
  }

  /** Persists the step cache; resolves once its entries are durable. */
  saveCache(): Promise<void> {
    this.collector.markRecorded(this.cache.layersInUse());
    return this.cache.save();
  }

  /** Every template (snapshots included when `kind` is not given). */
  list(kind?: TemplateRecord["kind"]): TemplateRecord[] {
    const all = [...this.templates.values()];
    return kind ? all.filter((t) => t.kind === kind) : all;
  }

  /** The template with this exact id. */
  get(templateID: string): TemplateRecord | undefined {
    return this.templates.get(templateID);
  }

  /** The template with this exact name (`ns/alias` or `alias`, no tag). */
  byName(name: string): TemplateRecord | undefined {
    for (const t of this.templates.values()) if (t.name === name) return t;
    return undefined;
  }

  /** Finds a template by id, name, `name:tag`, `id:tag` or snapshot id. */
  lookup(idOrName: string): LookupResult | undefined {
    const { name: base, tag } = parseTemplateName(idOrName);
    const template = this.templates.get(base) ?? this.byName(base);
    return template ? { template, tag } : undefined;
  }

  /**
   * The build a tag points at: its newest ready assignment. Without a tag,
   * the `default` tag, else the newest ready build (ids need no tag).
   */
  pickBuild(t: TemplateRecord, tag: string | undefined): BuildRecord | undefined {
    const assignments = t.tags[tag ?? DEFAULT_TAG] ?? [];
    for (let i = assignments.length - 1; i >= 0; i--) {
      const b = this.findBuild(t, assignments[i].buildID);
      if (b?.status === "ready") return b;
    }
    if (tag !== undefined) return undefined;
    for (let i = t.builds.length - 1; i >= 0; i--)
      if (t.builds[i].status === "ready") return t.builds[i];
    return undefined;
  }

  /** The build of `t` with this id. */
  findBuild(t: TemplateRecord, buildID: string): BuildRecord | undefined {
    return t.builds.find((b) => b.buildID === buildID);
  }

  /** Resolves an id or name to the ready build sandboxes start from. */
  resolve(idOrName: string): ResolvedTemplate | undefined {
    const found = this.lookup(idOrName);
    if (!found) return undefined;
    const build = this.pickBuild(found.template, found.tag);
    return build ? toResolved(found.template, build) : undefined;
  }

  /** Resolves one specific build, when it is ready. */
  resolveBuild(templateID: string, buildID: string): ResolvedTemplate | undefined {
    const t = this.templates.get(templateID);
    const b = t && this.findBuild(t, buildID);
    return t && b?.status === "ready" ? toResolved(t, b) : undefined;
  }

  /** Adds a template record (not yet persisted). */
  add(t: TemplateRecord): void {
    this.templates.set(t.templateID, t);
  }

  /** Points `tags` at `buildID`, keeping a bounded history per tag. */
  assignTags(t: TemplateRecord, buildID: string, tags: string[]): void {
    const createdAt = new Date().toISOString();
    for (const tag of tags) {
      const history = (t.tags[tag] ?? []).filter((a) => a.buildID !== buildID);
      history.push({ buildID, createdAt });
      t.tags[tag] = history.slice(-MAX_TAG_HISTORY);
    }
    t.updatedAt = createdAt;
  }

  /** Records a sandbox start from `templateID`. */
  markSpawned(templateID: string): void {
    const t = this.templates.get(templateID) ?? this.lookup(templateID)?.template;
    if (!t) return;
    t.spawnCount += 1;
    t.lastSpawnedAt = new Date().toISOString();
    this.save().catch((err: unknown) =>
      this.log(
        `templates: saving the catalog failed: ${SandboxIacError.from(err, { operation: "templates.catalog" }).reason}`,
      ),
    );
  }

  /** Layers some build still needs: ready builds' layers, running builds' parents, cached steps'. */
  private layersInUse(): Set<string> {
    const used = this.cache.layersInUse();
    used.add(this.runtime.baseLayerId);
    for (const t of this.templates.values()) {
      for (const b of t.builds) {
        for (const l of b.output?.layers ?? []) used.add(l);
        for (const l of b.parentLayers ?? []) used.add(l);
      }
    }
    return used;
  }

  /** True when every layer of `layers` is on disk. */
  async layersPresent(layers: readonly string[]): Promise<boolean> {
    for (const l of layers) if (!(await layerExists(this.dataDir, l))) return false;
    return true;
  }

  /** Removes a template, persists, then deletes its logs and the layers nothing else uses. */
  async remove(t: TemplateRecord): Promise<void> {
    this.templates.delete(t.templateID);
    await this.save();
    for (const b of t.builds) await this.logs.remove(b.buildID);
    await this.collectGarbage(`template ${t.name ?? t.templateID} deleted`);
  }
}

/** The view of a ready build that sandboxes start from. */
function toResolved(t: TemplateRecord, b: BuildRecord): ResolvedTemplate {
  const out = b.output ?? { layers: [], envs: {}, defaultUser: DEFAULT_USER };
  return {
    templateID: t.templateID,
    buildID: b.buildID,
    ...(t.name ? { alias: t.name } : {}),
    names: t.name ? [t.name] : [],
    layers: [...out.layers],
    envs: { ...out.envs },
    defaultUser: out.defaultUser,
    ...(out.defaultWorkdir ? { defaultWorkdir: out.defaultWorkdir } : {}),
    ...(out.startCmd ? { startCmd: out.startCmd } : {}),
    ...(out.readyCmd ? { readyCmd: out.readyCmd } : {}),
    cpuCount: b.cpuCount,
    memoryMB: b.memoryMB,
    diskSizeMB: REPORTED_DISK_SIZE_MB,
    envdVersion: b.envdVersion,
  };
}
