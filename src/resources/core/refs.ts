/**
 * Versioned references: how a dependent follows a change of what it starts
 * from. The one rule: a resource whose outputs feed another resource and
 * that can change in place without changing its ID (a Template rebuilt, a
 * kept sandbox provisioned again) also exposes `<id>@<version>`, a value
 * that changes with every new version and is planned unknown whenever a new
 * version is planned. A dependent that takes such a reference as an input
 * (Provisioner `template`, Snapshot `sandboxID`) sees a new version as a
 * changed input, and its change rule for that input applies (both replace):
 * Terraform shows the attribute with `# forces replacement`, Pulumi a diff
 * on it. The dependent uses the ID part with the service.
 *
 * @module
 */

/** Between the ID and the version in a reference; never part of a template name, template ID or sandbox ID. */
const REF_SEPARATOR = "@";

/** The reference to version `version` of `id`: `<id>@<version>`. */
export function versionedRef(id: string, version: string): string {
  return `${id}${REF_SEPARATOR}${version}`;
}

/** The ID a value names: the part before `@` of a reference, else the value itself. */
export function refTarget(value: string): string {
  const at = value.indexOf(REF_SEPARATOR);
  return at === -1 ? value : value.slice(0, at);
}
