/**
 * The tfplugin6 `Provider` calls that need the descriptors (all but the
 * schema calls and `StopProvider`). Every failure is answered as a diagnostic
 * (Terraform shows those). The provider process loads this module at its
 * first such call (provider/lazy-service.ts).
 *
 * @module
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { Provider, type Diagnostic } from "../../gen/terraform/tfplugin6_pb";
import type { Catalog, CatalogDataSource, CatalogResource } from "../schema/catalog";
import type { ProviderConfigInput } from "../schema/provider-config";
import { blockCodec } from "../values/block-codec";
import { readDataSource, validateDataSource } from "./data-sources";
import { errorDiagnostic, failureDiagnostic } from "./diagnostics";
import { resolve, validateProviderConfig } from "./provider-config";
import { planResource, validateResource } from "./plan";
import { applyResource, importResource, readResource, upgradeResource } from "./resources";
import type { ProviderRuntime } from "./runtime";
import { sourceKeyDiagnostics } from "./source-keys";
import { unfollowedRefDiagnostics } from "./source-refs";

function unknownType(kind: string, typeName: string, known: Iterable<string>): Diagnostic {
  return errorDiagnostic(
    `Unknown ${kind} type`,
    `${typeName} is not a ${kind} of this provider; it has: ${[...known].join(", ")}`,
  );
}

/** Runs `fn` for a known resource type, else answers with a diagnostic. */
async function withResource<T extends object>(
  catalog: Catalog,
  typeName: string,
  fn: (entry: CatalogResource) => T | Promise<T>,
): Promise<T | { diagnostics: Diagnostic[] }> {
  const entry = catalog.resources.get(typeName);
  if (!entry) return { diagnostics: [unknownType("resource", typeName, catalog.resources.keys())] };
  try {
    return await fn(entry);
  } catch (err) {
    return { diagnostics: [failureDiagnostic(typeName, err, [])] };
  }
}

async function withDataSource<T extends object>(
  catalog: Catalog,
  typeName: string,
  fn: (entry: CatalogDataSource) => T | Promise<T>,
): Promise<T | { diagnostics: Diagnostic[] }> {
  const entry = catalog.dataSources.get(typeName);
  if (!entry) {
    return { diagnostics: [unknownType("data source", typeName, catalog.dataSources.keys())] };
  }
  try {
    return await fn(entry);
  } catch (err) {
    return { diagnostics: [failureDiagnostic(typeName, err, [])] };
  }
}

/** The handlers {@link workHandlers} returns. */
export type WorkHandlers = Omit<
  Partial<ServiceImpl<typeof Provider>>,
  "getMetadata" | "getProviderSchema" | "stopProvider"
>;

/**
 * The calls that need the descriptors: configuration, validation, plan,
 * apply, read and import.
 */
export function workHandlers(
  catalog: Catalog,
  runtime: ProviderRuntime,
  log: (line: string) => void,
): WorkHandlers {
  return {
    validateProviderConfig(req) {
      const core = blockCodec(catalog.provider).read(req.config)?.inputs ?? {};
      return { diagnostics: validateProviderConfig(catalog.provider, core) };
    },
    configureProvider(req) {
      const core = (blockCodec(catalog.provider).read(req.config)?.inputs ??
        {}) as ProviderConfigInput;
      const resolved = resolve(catalog.provider, core, log);
      if ("diagnostics" in resolved) return { diagnostics: resolved.diagnostics };
      runtime.configure(resolved.config);
      return {};
    },
    validateResourceConfig: (req) =>
      withResource(catalog, req.typeName, async (entry) => {
        const config = blockCodec(entry.block).config(req.config);
        const written = config?.terraform ?? null;
        return {
          diagnostics: [
            ...(await sourceKeyDiagnostics(
              "resource",
              entry.typeName,
              entry.block,
              written,
              runtime.baseDir,
            )),
            ...(await unfollowedRefDiagnostics(
              entry.typeName,
              entry.block,
              written,
              runtime.baseDir,
            )),
            ...validateResource(entry, config),
          ],
        };
      }),
    validateDataResourceConfig: (req) =>
      withDataSource(catalog, req.typeName, async (entry) => {
        const config = blockCodec(entry.block).config(req.config);
        return {
          diagnostics: [
            ...(await sourceKeyDiagnostics(
              "data",
              entry.typeName,
              entry.block,
              config?.terraform ?? null,
              runtime.baseDir,
            )),
            ...validateDataSource(entry, config),
          ],
        };
      }),
    upgradeResourceState: (req) =>
      withResource(catalog, req.typeName, (entry) => upgradeResource(entry, req)),
    planResourceChange: (req) =>
      withResource(catalog, req.typeName, (entry) => planResource(entry, req, runtime)),
    applyResourceChange: (req, ctx) =>
      withResource(catalog, req.typeName, (entry) =>
        applyResource(entry, req, runtime, ctx.signal),
      ),
    readResource: (req, ctx) =>
      withResource(catalog, req.typeName, (entry) => readResource(entry, req, runtime, ctx.signal)),
    importResourceState: (req, ctx) =>
      withResource(catalog, req.typeName, (entry) =>
        importResource(entry, req, runtime, ctx.signal),
      ),
    readDataSource: (req, ctx) =>
      withDataSource(catalog, req.typeName, (entry) =>
        readDataSource(entry, req, runtime, ctx.signal),
      ),
  };
}
