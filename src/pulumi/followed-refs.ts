/**
 * Dependents given the plain ID instead of its versioned reference
 * (`core/refs.ts`): `template: agent.templateID` names the same template
 * across builds, so a rebuild never runs the Provisioner again. The engine
 * only ever sends the provider the value, so the program warns, on the
 * dependent, in two ways:
 * - at its construction, when the output object it is given is the plain
 *   output of a resource of this program (seen even when the value is not
 *   known yet, as in the preview of a rebuild);
 * - once the values are known, when the value it is given equals the plain
 *   output of a resource of this program, however it got there
 *   (`agent.templateID.apply(...)`, `pulumi.interpolate`, a copied string).
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import { FOLLOWED_LINKS, type FollowedLink, unfollowedReason } from "../resources/core/refs";

/** A plain output of a resource made so far, and that resource's name. */
interface PlainOutput {
  readonly link: FollowedLink;
  readonly output: pulumi.Output<unknown>;
  readonly name: string;
}

/** Plain outputs of the resources made so far, by output object. */
const byObject = new WeakMap<object, PlainOutput>();
/** Plain outputs of the resources made so far, in order, for the check by value. */
const made: PlainOutput[] = [];

/**
 * Notes the plain outputs of `resource` (of core type `typeName`, named
 * `name`), and warns on `resource` when one of its `args` is such an output,
 * or later turns out to have its value, where a reference is expected.
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
    if (link.source === typeName && pulumi.Output.isInstance(output)) {
      const plain = { link, output, name };
      byObject.set(output, plain);
      made.push(plain);
    }
    const given = (args as Record<string, unknown>)[link.input];
    if (link.dependent !== typeName || given === undefined || given === null) continue;
    const direct = typeof given === "object" ? byObject.get(given) : undefined;
    if (direct?.link === link) {
      warnUnfollowed(direct, resource);
      continue;
    }
    // Only resources made before this one: a value derived from a later
    // resource's output cannot be this resource's input.
    for (const plain of made.filter((p) => p.link === link)) {
      // Unknown values (a preview of a rebuild) never reach the callback.
      pulumi.all([given, plain.output]).apply(([value, id]) => {
        if (typeof value === "string" && value === id) warnUnfollowed(plain, resource);
      });
    }
  }
}

/** The warning, on `resource`, that its input takes `plain` rather than its reference. */
function warnUnfollowed({ link, name }: PlainOutput, resource: pulumi.Resource): void {
  void pulumi.log.warn(
    unfollowedReason(link, {
      input: link.input,
      plain: `the ${link.plain} of ${link.source} "${name}"`,
      ref: `its ${link.ref} (${link.input}: <the ${link.source}>.${link.ref})`,
    }),
    resource,
  );
}
