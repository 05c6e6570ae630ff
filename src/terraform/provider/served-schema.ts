/**
 * What `GetMetadata` and `GetProviderSchema` answer: the catalog's type
 * names, schema versions and blocks, as plain data. The build writes it to
 * `dist/terraform/served-schema.json` (scripts/bundle-provider.js), so a
 * provider process answers the schema calls without loading the descriptors
 * and zod: Terraform starts the provider 3 to 4 times per plan or apply, and
 * some of those starts only ask for the schema.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Provider } from "../../gen/terraform/tfplugin6_pb";
import type { Catalog } from "../schema/catalog";
import type { TfBlock } from "../schema/model";
import { protoSchema } from "../schema/proto-schema";
import type { ProviderRuntime } from "./runtime";

/** The file the build writes next to the provider's entry script. */
const SERVED_SCHEMA_FILE = "served-schema.json";

/** The schema side of a catalog, as plain data (JSON round-trips it). */
export interface ServedSchema {
  readonly provider: TfBlock;
  readonly resources: readonly { typeName: string; version: number; block: TfBlock }[];
  readonly dataSources: readonly { typeName: string; block: TfBlock }[];
}

/** The served schema of `catalog`. */
export function servedSchema(catalog: Catalog): ServedSchema {
  return {
    provider: catalog.provider,
    resources: [...catalog.resources.values()].map((r) => ({
      typeName: r.typeName,
      version: r.descriptor.version,
      block: r.block,
    })),
    dataSources: [...catalog.dataSources.values()].map((d) => ({
      typeName: d.typeName,
      block: d.block,
    })),
  };
}

/**
 * Writes the served schema of `catalog` into `dir`.
 * @public scripts/bundle-provider.js calls it from the build.
 */
export function writeServedSchema(dir: string, catalog: Catalog): void {
  fs.writeFileSync(path.join(dir, SERVED_SCHEMA_FILE), JSON.stringify(servedSchema(catalog)));
}

/**
 * The served schema the build wrote into `dir`, or undefined when the file is
 * not there (the compiled sources run without the build's last step).
 */
export function readServedSchema(dir: string): ServedSchema | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, SERVED_SCHEMA_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return JSON.parse(text) as ServedSchema;
}

/** The calls answered from the served schema alone, and `StopProvider`. */
export function schemaHandlers(
  schema: ServedSchema,
  runtime: ProviderRuntime,
): Pick<ServiceImpl<typeof Provider>, "getMetadata" | "getProviderSchema" | "stopProvider"> {
  // Terraform starts a provider once for the schema and once per graph walk
  // (validate 2, plan 3, apply 4 starts with 1.11.4); no capability lets it
  // reuse a process. `getProviderSchemaOptional` at least lets every start
  // after the first take terraform's process-wide cached schema instead of
  // asking again: this provider needs no GetProviderSchema call to serve.
  const serverCapabilities = { planDestroy: false, getProviderSchemaOptional: true };
  return {
    getMetadata() {
      return {
        serverCapabilities,
        resources: schema.resources.map(({ typeName }) => ({ typeName })),
        dataSources: schema.dataSources.map(({ typeName }) => ({ typeName })),
      };
    },
    getProviderSchema() {
      return {
        provider: protoSchema(schema.provider),
        resourceSchemas: Object.fromEntries(
          schema.resources.map((r) => [r.typeName, protoSchema(r.block, r.version)]),
        ),
        dataSourceSchemas: Object.fromEntries(
          schema.dataSources.map((d) => [d.typeName, protoSchema(d.block)]),
        ),
        serverCapabilities,
      };
    },
    stopProvider() {
      runtime.stopAll();
      return {};
    },
  };
}
