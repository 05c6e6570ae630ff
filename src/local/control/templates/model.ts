/**
 * The persisted shape of the template catalog: templates, their builds and
 * tags. Wire shapes are derived from these in views.ts.
 *
 * @module
 */
import { z } from "zod";
import type { components } from "../../../gen/control.gen";

/** `TemplateBuildStatus` (docs/control-api.md#enums). */
type BuildStatus = components["schemas"]["TemplateBuildStatus"];

/** `LogLevel` (docs/control-api.md#enums). */
export type LogLevel = components["schemas"]["LogLevel"];

/**
 * One line of a build log (`BuildLogEntry`); `step` is the SDK's step name:
 * `base`, the 1-based step number, or `finalize`.
 */
export type BuildLogEntry = components["schemas"]["BuildLogEntry"];

/** Why a build failed (`BuildStatusReason`). */
interface BuildFailure {
  message: string;
  /** The SDK's step name of the failing step. */
  step?: string;
}

/** What a finished build provides to sandboxes. */
export interface BuildOutput {
  /** Runtime layer ids, lowest first (the base layer id first). */
  layers: string[];
  /** Environment variables of every process (template `ENV` steps). */
  envs: Record<string, string>;
  /** The user processes run as by default (last `USER` step, else `user`). */
  defaultUser: string;
  /** The default working directory (last `WORKDIR` step), when set. */
  defaultWorkdir?: string;
  /** Started in the background when a sandbox starts. */
  startCmd?: string;
  /** Checked after `startCmd`. */
  readyCmd?: string;
}

/** One build of a template. */
export interface BuildRecord {
  buildID: string;
  status: BuildStatus;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  cpuCount: number;
  memoryMB: number;
  envdVersion: string;
  /** The manifest digest of the image a `fromImage` build pulled (`sha256:…`). */
  imageDigest?: string;
  /** The `minFreeDiskMb` the build was requested with, reported back (import reads it). */
  minFreeDiskMb?: number;
  /** Set once the build is `ready`. */
  output?: BuildOutput;
  /** Set once the build is `error`. */
  failure?: BuildFailure;
  /** Layers of the parent while the build runs; they must not be released meanwhile. */
  parentLayers?: string[];
  /** The runtime sandbox the build runs in, so a restart can clean it up. */
  buildSandboxId?: string;
}

/** One assignment of a tag to a build. */
interface TagAssignment {
  buildID: string;
  createdAt: string;
}

/** A template (or a snapshot, which is a template made from a sandbox). */
export interface TemplateRecord {
  templateID: string;
  /** `namespace/alias` or `alias`; absent for unnamed snapshots. */
  name?: string;
  kind: "template" | "snapshot";
  /** For snapshots: the sandbox they were taken from. */
  sourceSandboxID?: string;
  public: boolean;
  createdAt: string;
  updatedAt: string;
  lastSpawnedAt: string | null;
  spawnCount: number;
  /** Builds, oldest first. */
  builds: BuildRecord[];
  /** Tag → assignments, oldest first; the newest ready build wins. */
  tags: Record<string, TagAssignment[]>;
}

/** A template with no builds or tags yet, created and updated at `now`. */
export function newTemplateRecord(
  fields: Pick<TemplateRecord, "templateID" | "kind" | "public"> &
    Partial<Pick<TemplateRecord, "name" | "sourceSandboxID">>,
  now: string,
): TemplateRecord {
  return {
    ...fields,
    createdAt: now,
    updatedAt: now,
    lastSpawnedAt: null,
    spawnCount: 0,
    builds: [],
    tags: {},
  };
}

/** The catalog file's content. */
export interface CatalogFile {
  version: 1;
  templates: TemplateRecord[];
}

const buildOutputSchema = z.looseObject({
  layers: z.array(z.string()),
  envs: z.record(z.string(), z.string()),
  defaultUser: z.string(),
  defaultWorkdir: z.string().exactOptional(),
  startCmd: z.string().exactOptional(),
  readyCmd: z.string().exactOptional(),
});

const buildRecordSchema = z.looseObject({
  buildID: z.string(),
  status: z.enum(["building", "waiting", "ready", "error"]),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().exactOptional(),
  cpuCount: z.number(),
  memoryMB: z.number(),
  envdVersion: z.string(),
  imageDigest: z.string().exactOptional(),
  minFreeDiskMb: z.number().exactOptional(),
  output: buildOutputSchema.exactOptional(),
  failure: z.looseObject({ message: z.string(), step: z.string().exactOptional() }).exactOptional(),
  parentLayers: z.array(z.string()).exactOptional(),
  buildSandboxId: z.string().exactOptional(),
});

const templateRecordSchema = z.looseObject({
  templateID: z.string(),
  name: z.string().exactOptional(),
  kind: z.enum(["template", "snapshot"]),
  sourceSandboxID: z.string().exactOptional(),
  public: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastSpawnedAt: z.string().nullable(),
  spawnCount: z.number(),
  builds: z.array(buildRecordSchema),
  tags: z.record(
    z.string(),
    z.array(z.looseObject({ buildID: z.string(), createdAt: z.string() })),
  ),
});

/**
 * The catalog file as it is read back: {@link CatalogFile}, checked. Objects
 * keep keys the schema does not name, so a field a newer service added is
 * not dropped by a restart.
 */
export const catalogFileSchema: z.ZodType<CatalogFile> = z.looseObject({
  version: z.literal(1),
  templates: z.array(templateRecordSchema),
});
