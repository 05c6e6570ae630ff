/**
 * The templates side's entry points for the rest of the local service:
 * {@link createTemplateRegistry} (what sandboxes start from; its interface is
 * in lookup.ts) and the routes in routes.ts.
 *
 * @module
 */
import * as path from "node:path";
import type { SandboxRuntime } from "../../runtime/types";
import { SandboxIacError } from "../../../errors";
import { TemplateCatalog } from "./catalog";
import type { TemplateRegistry } from "./lookup";
import { TEMPLATE_FILES_DIR } from "./constants";
import { TemplateFileStore } from "./file-store";
import { BuildRunner } from "./build-runner";

/** Options of {@link createTemplateRegistry}. */
export interface TemplateRegistryOptions {
  /** The service's data dir; templates live in `templates/` and `template-files/`. */
  dataDir: string;
  /** The sandbox runtime builds run in. */
  runtime: SandboxRuntime;
  /**
   * Where to report problems that have no caller to fail (cleanup errors).
   * @default ignores them
   */
  log?: (line: string) => void;
  /**
   * Registries (`host:port`) that builds may pull from over plain HTTP;
   * loopback registries always may.
   * @default none
   */
  insecureRegistries?: readonly string[] | undefined;
  /**
   * Most bytes the layers made by cached build steps may take together; past
   * it the least recently used entries are dropped.
   * @default 10 GiB
   */
  maxStepCacheBytes?: number | undefined;
  /**
   * Most step cache entries kept; past it the least recently used go.
   * @default 2000
   */
  maxStepCacheEntries?: number | undefined;
}

/** The internals the routes work with; one per registry. */
export interface TemplatesInternals {
  catalog: TemplateCatalog;
  files: TemplateFileStore;
  builds: BuildRunner;
}

const internals = new WeakMap<TemplateRegistry, TemplatesInternals>();

/**
 * Loads (or creates) the template catalog in `dataDir`. Builds interrupted by
 * a restart are marked `error` ("interrupted by a service restart"), and
 * layers no template, step cache entry or recorded sandbox uses are deleted.
 */
export async function createTemplateRegistry(
  opts: TemplateRegistryOptions,
): Promise<TemplateRegistry> {
  const log = opts.log ?? (() => undefined);
  // Sandboxes are restored after the catalog: their layers are read from their state file.
  const catalog = await TemplateCatalog.open(opts.dataDir, opts.runtime, log, {
    ...(opts.maxStepCacheBytes !== undefined ? { maxBytes: opts.maxStepCacheBytes } : {}),
    ...(opts.maxStepCacheEntries !== undefined ? { maxEntries: opts.maxStepCacheEntries } : {}),
  });
  const files = await TemplateFileStore.open(path.join(opts.dataDir, TEMPLATE_FILES_DIR));
  const builds = new BuildRunner(catalog, files, opts.runtime, log, opts.dataDir, {
    insecureRegistries: opts.insecureRegistries ?? [],
  });
  const registry: TemplateRegistry = {
    resolve: (idOrName) => catalog.resolve(idOrName),
    markSpawned: (templateID) => catalog.markSpawned(templateID),
    onLayerRelease: (listener) => catalog.releaseListeners.push(listener),
  };
  internals.set(registry, { catalog, files, builds });
  return registry;
}

/**
 * The internals of a registry made by {@link createTemplateRegistry}.
 * @internal
 */
export function internalsOf(registry: TemplateRegistry): TemplatesInternals {
  const found = internals.get(registry);
  if (!found) {
    throw new SandboxIacError(
      "internal",
      "the registry was not made by createTemplateRegistry(): pass the registry it returned",
      {
        operation: "templates.routes",
      },
    );
  }
  return found;
}
