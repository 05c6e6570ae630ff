/**
 * Terraform names from core names: attribute names are the snake_case of the
 * core's camelCase (`memoryMB` -> `memory_mb`, `templateID` -> `template_id`),
 * type names are `sandboxiac_<snake_case>`.
 *
 * @module
 */

/** The provider's local name and the prefix of every resource and data source type. */
export const PROVIDER_NAME = "sandboxiac";
/** The provider's source address, as written in `required_providers`. */
export const PROVIDER_SOURCE = "sandbox-iac/sandboxiac";
/** The fully qualified address `terraform providers schema -json` keys the schema by. */
export const PROVIDER_ADDRESS = `registry.terraform.io/${PROVIDER_SOURCE}`;

/** `cpuCount` -> `cpu_count`, `memoryMB` -> `memory_mb`, `SandboxReader` -> `sandbox_reader`. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/** The Terraform type name of a core type name: `Template` -> `sandboxiac_template`. */
export function terraformTypeName(coreTypeName: string): string {
  return `${PROVIDER_NAME}_${snakeCase(coreTypeName)}`;
}
