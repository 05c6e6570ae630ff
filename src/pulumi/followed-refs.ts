/**
 * Dependents given the plain ID instead of its versioned reference
 * (`core/refs.ts`): `template: agent.templateID` names the same template
 * across builds, so a rebuild never runs the Provisioner again. The engine
 * only ever sends the provider the value, so the program warns, at the
 * construction of the dependent, when the output object it is given is the
 * plain output of a resource of this program.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import { FOLLOWED_LINKS, unfollowedReason } from "../resources/core/refs";

/** Plain outputs of the resources made so far: the output object -> its link and resource name. */
const plainOutputs = new WeakMap<object, { link: (typeof FOLLOWED_LINKS)[number]; name: string }>();

/**
 * Notes the plain outputs of `resource` (of core type `typeName`, named
 * `name`), and warns on `resource` when one of its `args` is such an output
 * where a reference is expected.
 */
export function noteFollowedRefs(
  typeName: string,
  name: string,
  resource: pulumi.Resource,
  args: object,
): void {
  const fields = resource as unknown as Record<string, unknown>;
  for (const link of FOLLOWED_LINKS) {
    const output = fields[link.plain];
    if (link.source === typeName && typeof output === "object" && output !== null)
      plainOutputs.set(output, { link, name });
    const given = (args as Record<string, unknown>)[link.input];
    if (link.dependent !== typeName || typeof given !== "object" || given === null) continue;
    const from = plainOutputs.get(given);
    if (from?.link !== link) continue;
    void pulumi.log.warn(
      unfollowedReason(link, {
        input: link.input,
        plain: `the ${link.plain} of ${link.source} "${from.name}"`,
        ref: `its ${link.ref} (${link.input}: <the ${link.source}>.${link.ref})`,
      }),
      resource,
    );
  }
}
