/**
 * URNs computed with the engine's rules (`resource.NewURN`), not with
 * `MockMonitor.newUrn`, which prefixes children of the stack with
 * `pulumi:pulumi:Stack$` and keeps only the last segment of a parent's type.
 *
 * @module
 */

/** The type token of the root stack component. */
export const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

/** The qualified type of a URN: the third `::` segment, e.g. `a:b:C$d:e:F`. */
export function qualifiedType(urn: string): string {
  return urn.split("::")[2] ?? "";
}

/**
 * The URN the engine gives a resource: `urn:pulumi:<stack>::<project>::<type>::<name>`,
 * where the type is prefixed with the parent's qualified type and `$`, unless the
 * parent is the root stack.
 */
export function resourceUrn(
  stack: string,
  project: string,
  parentUrn: string,
  type: string,
  name: string,
): string {
  const parentType = parentUrn ? qualifiedType(parentUrn) : "";
  const qualified = parentType && parentType !== ROOT_STACK_TYPE ? `${parentType}$${type}` : type;
  return `urn:pulumi:${stack}::${project}::${qualified}::${name}`;
}
