/**
 * The Terraform provider (`sandbox-iac/sandboxiac`, plugin protocol 6) as a
 * library: its schema in the `terraform providers schema -json` shape (for
 * the CDK bindings), the installer and the server pieces.
 *
 * @module
 */
export { providerSchemaJson, type ProviderSchemaJson } from "./schema/schema-json";
export { PROVIDER_ADDRESS, PROVIDER_NAME, PROVIDER_SOURCE, snakeCase } from "./schema/names";
export { defaultCatalog } from "./catalog";
export {
  installProvider,
  packageVersion,
  type InstallOptions,
  type InstallResult,
} from "./install";
export { servePlugin, type PluginServer, type ServePluginOptions } from "./plugin/server";
export { providerService } from "./provider/service";
export { ProviderRuntime } from "./provider/runtime";
