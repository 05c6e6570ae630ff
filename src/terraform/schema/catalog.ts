/**
 * What the provider serves: each resource and data source descriptor with its
 * Terraform type name and attributes, in one place for the gRPC service, the
 * JSON schema and the CDK bindings.
 *
 * @module
 */
import type { DataSourceDescriptor, ResourceDescriptor } from "../../resources/core/descriptor";
import { dataSourceBlock, providerBlock, resourceBlock } from "./blocks";
import type { TfBlock } from "./model";
import { terraformTypeName } from "./names";

/** A resource as the provider serves it. */
export interface CatalogResource {
  /** `sandboxiac_template`. */
  readonly typeName: string;
  readonly descriptor: ResourceDescriptor;
  readonly block: TfBlock;
}

/** A data source as the provider serves it. */
export interface CatalogDataSource {
  /** `sandboxiac_sandbox`. */
  readonly typeName: string;
  readonly descriptor: DataSourceDescriptor;
  readonly block: TfBlock;
}

/** Everything the provider serves. */
export interface Catalog {
  readonly provider: TfBlock;
  readonly resources: ReadonlyMap<string, CatalogResource>;
  readonly dataSources: ReadonlyMap<string, CatalogDataSource>;
}

/** Builds the catalog of the given descriptors (throws when a schema cannot be expressed). */
export function buildCatalog(
  resources: readonly ResourceDescriptor[],
  dataSources: readonly DataSourceDescriptor[],
): Catalog {
  return {
    provider: providerBlock(),
    resources: new Map(
      resources.map((descriptor) => {
        const typeName = terraformTypeName(descriptor.typeName);
        return [typeName, { typeName, descriptor, block: resourceBlock(descriptor) }];
      }),
    ),
    dataSources: new Map(
      dataSources.map((descriptor) => {
        const typeName = terraformTypeName(descriptor.typeName);
        return [typeName, { typeName, descriptor, block: dataSourceBlock(descriptor) }];
      }),
    ),
  };
}
