/**
 * What the template catalog puts right each time it opens, before anything
 * reads it: the built-in `base` template (created on first start, its layer
 * refreshed at every start since the runtime assembles it from the host), and
 * builds a stopped service left `building` (marked failed, their build
 * sandboxes destroyed). Its own file because it is the catalog's recovery
 * from a stop or a crash, apart from its day-to-day look-ups and writes.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import { ENVD_VERSION, DEFAULT_USER } from "../../../wire/envd";
import type { BuildLogStore } from "./build-logs";
import { BASE_TEMPLATE_ID, INTERRUPTED_BUILD_MESSAGE } from "./constants";
import { newTemplateRecord, type TemplateRecord } from "./model";
import { newBuildID } from "../../../wire/ids";
import { DEFAULT_TAG } from "../../../wire/template-names";
import { SandboxIacError } from "../../../errors";

/** CPU and memory of the built-in `base` template. */
const BASE_CPU_COUNT = 2;
const BASE_MEMORY_MB = 512;

/**
 * Adds the built-in `base` template and its one ready build to `templates`
 * when missing, and points that build at the runtime's base layer of this
 * start (`baseLayerId`).
 */
export function ensureBase(templates: Map<string, TemplateRecord>, baseLayerId: string): void {
  const now = new Date().toISOString();
  let base = templates.get(BASE_TEMPLATE_ID);
  if (!base) {
    base = newTemplateRecord(
      { templateID: BASE_TEMPLATE_ID, name: BASE_TEMPLATE_ID, kind: "template", public: true },
      now,
    );
    templates.set(BASE_TEMPLATE_ID, base);
  }
  let build = base.builds[0];
  if (!build) {
    build = {
      buildID: newBuildID(),
      status: "ready",
      createdAt: now,
      updatedAt: now,
      finishedAt: now,
      cpuCount: BASE_CPU_COUNT,
      memoryMB: BASE_MEMORY_MB,
      envdVersion: ENVD_VERSION,
    };
    base.builds.push(build);
    base.tags[DEFAULT_TAG] = [{ buildID: build.buildID, createdAt: now }];
  }
  // the base layer is assembled from the host at each start, so its id is refreshed too
  build.output = { layers: [baseLayerId], envs: {}, defaultUser: DEFAULT_USER };
  build.envdVersion = ENVD_VERSION;
}

/**
 * Marks every build of `templates` still `building` as failed (the service
 * stopped under it), logs why to its build log, and destroys its build
 * sandbox; a sandbox that cannot be destroyed is logged and left.
 */
export async function recoverInterruptedBuilds(
  templates: Map<string, TemplateRecord>,
  runtime: SandboxRuntime,
  logs: BuildLogStore,
  log: (line: string) => void,
): Promise<void> {
  for (const t of templates.values()) {
    for (const b of t.builds) {
      if (b.status !== "building") continue;
      const now = new Date().toISOString();
      b.status = "error";
      b.failure = { message: INTERRUPTED_BUILD_MESSAGE };
      b.updatedAt = now;
      b.finishedAt = now;
      delete b.parentLayers;
      logs.append(b.buildID, "error", `Build failed: ${INTERRUPTED_BUILD_MESSAGE}`);
      if (b.buildSandboxId) {
        const id = b.buildSandboxId;
        delete b.buildSandboxId;
        try {
          await runtime.destroy(id);
        } catch (err) {
          log(
            `templates: could not destroy interrupted build sandbox ${id}: ${SandboxIacError.from(err, { operation: "templates.catalog" }).reason}`,
          );
        }
      }
    }
  }
}
