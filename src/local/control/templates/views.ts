/**
 * Wire shapes of templates, builds and snapshots (docs/control-api.md#template-schemas),
 * derived from the catalog records.
 *
 * @module
 */
import type { components } from "../../../gen/control.gen";
import { ENVD_VERSION } from "../../../wire/envd";
import { DEFAULT_TAG } from "../../../wire/template-names";
import { REPORTED_DISK_SIZE_MB } from "./constants";
import type { TemplateCatalog } from "./catalog";
import type { BuildRecord, TemplateRecord } from "./model";

type Schemas = components["schemas"];

/** The build a template's summary shows: the default tag's ready build, else the newest. */
function headlineBuild(catalog: TemplateCatalog, t: TemplateRecord): BuildRecord | undefined {
  return catalog.pickBuild(t, undefined) ?? t.builds[t.builds.length - 1];
}

function names(t: TemplateRecord): { names: string[]; aliases: string[] } {
  if (!t.name) return { names: [], aliases: [] };
  const alias = t.name.slice(t.name.indexOf("/") + 1);
  return { names: [t.name], aliases: [alias] };
}

/** `Template`: every field required. */
export function templateView(catalog: TemplateCatalog, t: TemplateRecord): Schemas["Template"] {
  const b = headlineBuild(catalog, t);
  return {
    templateID: t.templateID,
    buildID: b?.buildID ?? "",
    cpuCount: b?.cpuCount ?? 0,
    memoryMB: b?.memoryMB ?? 0,
    diskSizeMB: REPORTED_DISK_SIZE_MB,
    public: t.public,
    ...names(t),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    createdBy: null,
    lastSpawnedAt: t.lastSpawnedAt,
    spawnCount: t.spawnCount,
    buildCount: t.builds.length,
    envdVersion: b?.envdVersion ?? ENVD_VERSION,
    buildStatus: b?.status ?? "waiting",
  };
}

/** `TemplateBuild`. */
function buildView(b: BuildRecord): Schemas["TemplateBuild"] {
  return {
    buildID: b.buildID,
    status: b.status,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
    ...(b.finishedAt ? { finishedAt: b.finishedAt } : {}),
    cpuCount: b.cpuCount,
    memoryMB: b.memoryMB,
    diskSizeMB: REPORTED_DISK_SIZE_MB,
    envdVersion: b.envdVersion,
    ...(b.imageDigest ? { imageDigest: b.imageDigest } : {}),
    ...(b.minFreeDiskMb !== undefined ? { minFreeDiskMb: b.minFreeDiskMb } : {}),
  };
}

/** `TemplateWithBuilds`, builds newest first. */
export function templateWithBuildsView(
  t: TemplateRecord,
  builds: BuildRecord[],
): Schemas["TemplateWithBuilds"] {
  return {
    templateID: t.templateID,
    public: t.public,
    ...names(t),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    lastSpawnedAt: t.lastSpawnedAt,
    spawnCount: t.spawnCount,
    builds: builds.map(buildView),
  };
}

/** The tags of `t` with the build each points at (`TemplateTag[]`). */
export function tagsView(catalog: TemplateCatalog, t: TemplateRecord): Schemas["TemplateTag"][] {
  const out: Schemas["TemplateTag"][] = [];
  for (const [tag, history] of Object.entries(t.tags)) {
    const ready = catalog.pickBuild(t, tag);
    const assignment = ready
      ? history.find((a) => a.buildID === ready.buildID)
      : history[history.length - 1];
    if (assignment) out.push({ tag, buildID: assignment.buildID, createdAt: assignment.createdAt });
  }
  return out.sort((a, b) => a.tag.localeCompare(b.tag));
}

/** A snapshot's id: `<name>:default` when named, else `<templateID>:default`. */
export function snapshotId(t: TemplateRecord): string {
  return `${t.name ?? t.templateID}:${DEFAULT_TAG}`;
}

/** `SnapshotInfo`. */
export function snapshotView(t: TemplateRecord): Schemas["SnapshotInfo"] {
  const id = snapshotId(t);
  return { snapshotID: id, names: [id] };
}
