/**
 * The Provider service as the provider process serves it: the schema calls
 * from the served schema the build wrote, and every other call through the
 * descriptors, loaded at the first such call. The descriptors pull in zod,
 * the clients and the provisioner, most of a provider's start when loaded
 * before the handshake; a start that only serves the schema never loads them.
 *
 * @module
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { Provider } from "../../gen/terraform/tfplugin6_pb";
import type { ProviderRuntime } from "./runtime";
import { type ServedSchema, schemaHandlers } from "./served-schema";
import type { WorkHandlers } from "./work";

/** A handler that loads the work handlers first, then answers with the one named `name`. */
function deferred<K extends keyof WorkHandlers>(
  load: () => Promise<WorkHandlers>,
  name: K,
): NonNullable<WorkHandlers[K]> {
  const handler = async (req: never, ctx: never): Promise<unknown> => {
    const work = (await load())[name] as (req: never, ctx: never) => unknown;
    return work(req, ctx);
  };
  return handler as NonNullable<WorkHandlers[K]>;
}

/** The Provider service over `schema`, loading the descriptors at the first call that needs them. */
export function lazyProviderService(
  schema: ServedSchema,
  runtime: ProviderRuntime,
  log: (line: string) => void,
): Partial<ServiceImpl<typeof Provider>> {
  let work: Promise<WorkHandlers> | undefined;
  const load = (): Promise<WorkHandlers> =>
    (work ??= Promise.all([import("../catalog"), import("./work")]).then(([catalog, handlers]) =>
      handlers.workHandlers(catalog.defaultCatalog(), runtime, log),
    ));
  return {
    ...schemaHandlers(schema, runtime),
    validateProviderConfig: deferred(load, "validateProviderConfig"),
    configureProvider: deferred(load, "configureProvider"),
    validateResourceConfig: deferred(load, "validateResourceConfig"),
    validateDataResourceConfig: deferred(load, "validateDataResourceConfig"),
    upgradeResourceState: deferred(load, "upgradeResourceState"),
    planResourceChange: deferred(load, "planResourceChange"),
    applyResourceChange: deferred(load, "applyResourceChange"),
    readResource: deferred(load, "readResource"),
    importResourceState: deferred(load, "importResourceState"),
    readDataSource: deferred(load, "readDataSource"),
  };
}
