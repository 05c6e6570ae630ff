/**
 * The catalog the provider serves: every descriptor of the core registry.
 *
 * @module
 */
import { dataSourceDescriptors, resourceDescriptors } from "../resources/registry";
import { type Catalog, buildCatalog } from "./schema/catalog";

let cached: Catalog | undefined;

/** The catalog of the core registry (built once). */
export function defaultCatalog(): Catalog {
  cached ??= buildCatalog(resourceDescriptors, dataSourceDescriptors);
  return cached;
}
