/**
 * The tfplugin6 `Provider` service over a catalog of descriptors. Every
 * failure is answered as a diagnostic (Terraform shows those); gRPC errors are
 * left for calls the provider does not implement.
 *
 * @module
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { Provider } from "../../gen/terraform/tfplugin6_pb";
import type { Catalog } from "../schema/catalog";
import type { ProviderRuntime } from "./runtime";
import { schemaHandlers, servedSchema } from "./served-schema";
import { workHandlers } from "./work";

/** The Provider service implementation. */
export function providerService(
  catalog: Catalog,
  runtime: ProviderRuntime,
  log: (line: string) => void,
): Partial<ServiceImpl<typeof Provider>> {
  return {
    ...schemaHandlers(servedSchema(catalog), runtime),
    ...workHandlers(catalog, runtime, log),
  };
}
