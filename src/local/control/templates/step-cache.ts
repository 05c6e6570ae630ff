/**
 * The step cache: the result of each build step (its layer and the build
 * state after it), keyed like E2B's builder keys its layers: the key of the
 * step's parent (the layers, environment, user and working directory the
 * build started from, then each earlier step's key) hashed with the step's
 * type, args and `filesHash`. A COPY is thus keyed by the hash of the files'
 * paths, modes and content the SDK computed, never by their mtime; the
 * environment, user and workdir a step runs with are the product of the steps
 * before it, so they are in the parent's key.
 *
 * One cache serves the whole service (E2B's is per team; the local service
 * has one API key, so one team), across templates. Entries are persisted in
 * `templates/step-cache.json` with atomic writes, after the layer they name
 * is in place: a `kill -9` leaves at worst a layer no entry names (removed by
 * the next garbage collection). An entry whose layers are missing is ignored.
 *
 * The cache is bounded (least recently used entries go first) by the bytes
 * of the layers its entries made and by the number of entries; an evicted
 * entry's layer is deleted by the next garbage collection unless a template
 * uses it.
 *
 * @module
 */
import { createHash } from "node:crypto";
import * as path from "node:path";
import { z } from "zod";
import { JsonStateWriter, readStateFile } from "../state-file";
import type { TemplateStep } from "./build-steps";

/** Bump when what a step produces for the same key changes, so old entries stop matching. */
const KEY_VERSION = "1";

/** File of the cache, in the templates directory. */
export const STEP_CACHE_FILE = "step-cache.json";

/** Bounds of the cache. */
export interface StepCacheLimits {
  /**
   * Most bytes the layers made by cached steps may take together.
   * @default 10 GiB ({@link DEFAULT_STEP_CACHE_MAX_BYTES})
   */
  maxBytes: number;
  /**
   * Most entries kept.
   * @default 2000 ({@link DEFAULT_STEP_CACHE_MAX_ENTRIES})
   */
  maxEntries: number;
}

/** Default of {@link StepCacheLimits.maxBytes}: 10 GiB. */
const DEFAULT_STEP_CACHE_MAX_BYTES = 10 * 1024 ** 3;
/** Default of {@link StepCacheLimits.maxEntries}. */
const DEFAULT_STEP_CACHE_MAX_ENTRIES = 2000;

/** The build state a step starts from or leaves behind. */
export interface StepState {
  /** Layer ids, lowest first. */
  layers: string[];
  envs: Record<string, string>;
  user: string;
  workdir: string | undefined;
}

/** One cached step. */
interface StepCacheEntry {
  /** The state after the step (its layer, when it made one, is the last of `layers`). */
  layers: string[];
  envs: Record<string, string>;
  user: string;
  workdir?: string;
  /** The layer the step made, when it changed files. */
  layer?: string;
  /** Bytes of `layer` on disk. */
  bytes: number;
  createdAt: string;
  lastUsedAt: string;
}

interface StepCacheFile {
  version: 1;
  entries: Record<string, StepCacheEntry>;
}

/** step-cache.json as it is read back; objects keep keys it does not name. */
const stepCacheFileSchema: z.ZodType<StepCacheFile> = z.looseObject({
  version: z.literal(1),
  entries: z.record(
    z.string(),
    z.looseObject({
      layers: z.array(z.string()),
      envs: z.record(z.string(), z.string()),
      user: z.string(),
      workdir: z.string().exactOptional(),
      layer: z.string().exactOptional(),
      bytes: z.number(),
      createdAt: z.string(),
      lastUsedAt: z.string(),
    }),
  ),
});

/** The key of the state a build starts from (its base: a template's build or an image). */
export function baseKey(base: StepState): string {
  return hash(["base", base.layers, base.envs, base.user, base.workdir ?? null]);
}

/** The key of `step` run on the state keyed `parentKey`. */
export function stepKey(parentKey: string, step: TemplateStep): string {
  return hash(["step", parentKey, step.type.toUpperCase(), step.args, step.filesHash ?? null]);
}

function hash(parts: unknown[]): string {
  return createHash("sha256")
    .update(JSON.stringify([KEY_VERSION, ...parts]))
    .digest("hex");
}

/** The service's step cache. */
export class StepCache {
  private readonly entries = new Map<string, StepCacheEntry>();
  private readonly writer: JsonStateWriter;

  private constructor(
    file: string,
    private readonly limits: StepCacheLimits,
  ) {
    this.writer = new JsonStateWriter(file, () => this.snapshot(), undefined);
  }

  /**
   * Loads the cache kept in `templatesDir` (empty on first use), bounded by
   * `limits` (each defaulted). Limits lower than what the file holds apply at
   * once: the least recently used entries are dropped (and saved so), and
   * their layers go at the next garbage collection.
   */
  static async open(
    templatesDir: string,
    limits: Partial<StepCacheLimits> = {},
  ): Promise<StepCache> {
    const file = path.join(templatesDir, STEP_CACHE_FILE);
    const cache = new StepCache(file, {
      maxBytes: limits.maxBytes ?? DEFAULT_STEP_CACHE_MAX_BYTES,
      maxEntries: limits.maxEntries ?? DEFAULT_STEP_CACHE_MAX_ENTRIES,
    });
    const saved = await readStateFile(file, stepCacheFileSchema);
    for (const [key, entry] of Object.entries(saved?.entries ?? {})) cache.entries.set(key, entry);
    if (cache.evict(undefined) > 0) await cache.save();
    return cache;
  }

  private snapshot(): StepCacheFile {
    return { version: 1, entries: Object.fromEntries(this.entries) };
  }

  /** Persists the cache; resolves once the current entries are durable. */
  save(): Promise<void> {
    return this.writer.flush();
  }

  /**
   * The state cached under `key`, when every one of its layers still exists
   * (`exists` says); marks the entry used.
   */
  async find(
    key: string,
    exists: (layerId: string) => Promise<boolean>,
  ): Promise<StepState | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    for (const layer of entry.layers) if (!(await exists(layer))) return undefined;
    entry.lastUsedAt = new Date().toISOString();
    return {
      layers: [...entry.layers],
      envs: { ...entry.envs },
      user: entry.user,
      workdir: entry.workdir,
    };
  }

  /**
   * Records the state after a step (replacing what `key` had), then evicts
   * the least recently used entries beyond the bounds. Not persisted: call
   * {@link save}.
   */
  record(key: string, state: StepState, layer: string | undefined, bytes: number): void {
    const now = new Date().toISOString();
    this.entries.set(key, {
      layers: [...state.layers],
      envs: { ...state.envs },
      user: state.user,
      ...(state.workdir ? { workdir: state.workdir } : {}),
      ...(layer ? { layer } : {}),
      bytes,
      createdAt: now,
      lastUsedAt: now,
    });
    this.evict(key);
  }

  /** Drops least recently used entries (never `keep`) until the bounds hold; returns how many. */
  private evict(keep: string | undefined): number {
    const byAge = [...this.entries.entries()].sort((a, b) =>
      a[1].lastUsedAt.localeCompare(b[1].lastUsedAt),
    );
    let bytes = byAge.reduce((sum, [, e]) => sum + e.bytes, 0);
    let count = byAge.length;
    let dropped = 0;
    for (const [key, entry] of byAge) {
      if (bytes <= this.limits.maxBytes && count <= this.limits.maxEntries) break;
      if (key === keep) continue;
      this.entries.delete(key);
      bytes -= entry.bytes;
      count--;
      dropped++;
    }
    return dropped;
  }

  /** Every layer some entry needs (a cache entry is a reference to its layers). */
  layersInUse(): Set<string> {
    const used = new Set<string>();
    for (const e of this.entries.values()) for (const l of e.layers) used.add(l);
    return used;
  }
}
