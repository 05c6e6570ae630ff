/**
 * Keeping a template build's tags equal to the desired ones, and telling
 * whether they differ (out-of-band changes count).
 *
 * @module
 */
import type { ResourceContext } from "../core/lifecycle";
import { currentTagsOf, type TemplateControl } from "../core/template-control";
import { DEFAULT_TAG, parseTemplateName } from "../../wire/template-names";

/**
 * The tags a build of `name` with `tags` ends up with: the tag carried by the
 * name, then `tags`, deduplicated and sorted; `default` when there is none.
 */
export function desiredTags(name: string, tags: readonly string[] | undefined): string[] {
  const { tag } = parseTemplateName(name);
  const all = new Set<string>([...(tag ? [tag] : []), ...(tags ?? [])]);
  if (all.size === 0) all.add(DEFAULT_TAG);
  return [...all].sort();
}

/** The tag changes that bring `current` to `desired`; `default` is never removed (the service refuses). */
export function tagChanges(
  desired: readonly string[],
  current: readonly string[],
): { add: string[]; remove: string[] } {
  const want = new Set(desired);
  const have = new Set(current);
  return {
    add: [...want].filter((t) => !have.has(t)).sort(),
    remove: [...have].filter((t) => !want.has(t) && t !== DEFAULT_TAG).sort(),
  };
}

/** True when the tags on the build differ from the desired ones. */
export function tagsDiffer(desired: readonly string[], current: readonly string[]): boolean {
  const { add, remove } = tagChanges(desired, current);
  return add.length + remove.length > 0;
}

/**
 * Assigns and removes tags so that build `buildID` carries `desired`. New tags
 * are assigned through a tag the build already has (`name:tag` target), or
 * through its build id when it has none.
 */
export async function syncTags(
  control: TemplateControl,
  target: { templateID: string; buildID: string; name: string },
  desired: readonly string[],
  ctx: ResourceContext,
): Promise<string[]> {
  const base = parseTemplateName(target.name).name;
  const current = await currentTagsOf(control, target.templateID, target.buildID);
  const { add, remove } = tagChanges(desired, current);
  // A build that lost every tag is named by its id (the local service takes
  // `name:<buildID>`; a tag is never a UUID, so this cannot hit a tag).
  const anchor = current[0] ?? target.buildID;
  if (add.length > 0) {
    ctx.log(`assigning tags ${add.join(", ")} to ${base}`);
    await control.assignTags(`${base}:${anchor}`, add);
  }
  if (remove.length > 0) {
    ctx.log(`removing tags ${remove.join(", ")} from ${base}`);
    await control.deleteTags(base, remove);
  }
  return currentTagsOf(control, target.templateID, target.buildID);
}
