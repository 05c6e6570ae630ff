/**
 * Who a provider's log line is about, written once for every adapter.
 *
 * @module
 */

/** `value` when it is a non-empty string. */
function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Who a log line is about: the adapter's type name and the resource's `name`
 * input (else its snapshot's name, the sandbox it works in, or its id; a
 * Provisioner being created, its template). Neither engine tells a provider
 * which resource of a type it works on (Pulumi's plugin output carries no
 * URN, tfplugin6 requests carry the type name only), and resources of one
 * type are applied concurrently: the label tells their lines apart.
 */
export function resourceLabel(
  typeName: string,
  inputs: Record<string, unknown>,
  id?: string,
): string {
  const snapshot = inputs["snapshot"];
  const template = text(inputs["template"]);
  const which =
    text(inputs["name"]) ??
    // A Provisioner has no name: its snapshot's name, or the sandbox it works in, tells it apart.
    (typeof snapshot === "object" && snapshot !== null
      ? text((snapshot as Record<string, unknown>)["name"])
      : undefined) ??
    text(inputs["sandboxID"]) ??
    text(id) ??
    (template ? `from template ${template}` : undefined);
  return which ? `${typeName} ${which}` : typeName;
}
