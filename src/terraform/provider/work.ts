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
import { decodeDynamic } from "../values/dynamic-value";
import { objectToCore } from "../values/convert";
import type { ProviderConfigInput } from "../schema/provider-config";
import type { TfValue } from "../values/dynamic-value";
import { readDataSource, validateDataSource } from "./data-sources";
import { errorDiagnostic, failureDiagnostic } from "./diagnostics";
import { resolve, validateProviderConfig } from "./provider-config";
import { planResource, validateResource } from "./plan";
import { applyResource, importResource, readResource, upgradeResource } from "./resources";
import type { ProviderRuntime } from "./runtime";
import { sourceKeyDiagnostics } from "./source-keys";
import { unfollowedRefDiagnostics } from "./source-refs";
import { decodeObject } from "./state";

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
      return { diagnostics: validateProviderConfig(catalog.provider, decodeDynamic(req.config)) };
    },
    configureProvider(req) {
      const core = objectToCore(
        catalog.provider.attributes,
        decodeDynamic(req.config) as Record<string, TfValue> | null,
      ) as ProviderConfigInput;
      const resolved = resolve(catalog.provider, core, log);
      if ("diagnostics" in resolved) return { diagnostics: resolved.diagnostics };
      runtime.configure(resolved.config);
      return {};
    },
    validateResourceConfig: (req) =>
      withResource(catalog, req.typeName, async (entry) => ({
        diagnostics: [
          ...(await sourceKeyDiagnostics(
            "resource",
            entry.typeName,
            entry.block,
            decodeObject(req.config),
            runtime.baseDir,
          )),
          ...(await unfollowedRefDiagnostics(
            entry.typeName,
            entry.block,
            decodeObject(req.config),
            runtime.baseDir,
          )),
          ...(validateResource(entry, req).diagnostics ?? []),
        ],
      })),
    validateDataResourceConfig: (req) =>
      withDataSource(catalog, req.typeName, async (entry) => ({
        diagnostics: [
          ...(await sourceKeyDiagnostics(
            "data",
            entry.typeName,
            entry.block,
            decodeObject(req.config),
            runtime.baseDir,
          )),
          ...(validateDataSource(entry, req).diagnostics ?? []),
        ],
      })),
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
