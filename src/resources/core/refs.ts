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

/**
 * A dependent input wired to the plain ID beside a versioned reference: the
 * value never changes across versions, so the dependent never follows them.
 * Each adapter that can see the wiring (Terraform reads the configuration,
 * Pulumi sees the output object passed) warns with {@link unfollowedReason}.
 */
export interface FollowedLink {
  /** The resource the dependent starts from, e.g. `Template`. */
  readonly source: string;
  /** Its output that names it without a version, e.g. `templateID`. */
  readonly plain: string;
  /** Its output that changes with every version, e.g. `ref`. */
  readonly ref: string;
  /** The dependent resource, e.g. `Provisioner`. */
  readonly dependent: string;
  /** The dependent's input that takes the reference, e.g. `template`. */
  readonly input: string;
  /** What a version is called (`build`), and what the dependent then misses. */
  readonly version: string;
  readonly missed: string;
}

/** Every input that follows a versioned reference, and the plain output it must not take. */
export const FOLLOWED_LINKS: readonly FollowedLink[] = [
  {
    source: "Template",
    plain: "templateID",
    ref: "ref",
    dependent: "Provisioner",
    input: "template",
    version: "build",
    missed: "run this Provisioner again",
  },
  {
    source: "Provisioner",
    plain: "keptSandboxID",
    ref: "keptSandboxRef",
    dependent: "Snapshot",
    input: "sandboxID",
    version: "run",
    missed: "retake this Snapshot",
  },
];

/**
 * The warning for `link`'s input wired to the plain output, in an adapter's
 * words: `input` is the input as the user writes it (`template`), `plain` and
 * `ref` how the user names the two outputs of the source
 * (`sandboxiac_template.app.template_id`, `sandboxiac_template.app.ref`).
 */
export function unfollowedReason(
  link: FollowedLink,
  names: { input: string; plain: string; ref: string },
): string {
  return (
    `${names.input} takes ${names.plain}, which stays the same across ${link.version}s: ` +
    `a new ${link.version} of the ${link.source} will not ${link.missed}; ` +
    `give ${names.ref} instead`
  );
}
