/**
 * The `Template` dynamic resource: a named template built from a base and
 * steps. See `src/resources/template/template.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  TemplateArgs as TemplateInputArgs,
  TemplateInputs,
} from "../resources/template/template.args";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Template}: `[namespace/]alias[:tag]` name, tags, resources and the build. */
export type TemplateArgs = ResourceArgs<TemplateInputArgs>;

const provider = createDynamicProvider("Template");

/**
 * A template built by the service. A name change replaces it; a change of tags
 * re-assigns them; a change of the build (steps, base, a COPY source's content)
 * or of `cpuCount`/`memoryMB` makes a new build of the same template (same ID).
 */
export class Template extends pulumi.dynamic.Resource {
  /** The template name. */
  declare readonly name: pulumi.Output<string>;
  /** The desired tags, as given. */
  declare readonly tags: pulumi.Output<string[] | undefined>;
  /** vCPUs, as given. */
  declare readonly cpuCount: pulumi.Output<number | undefined>;
  /** Memory in MiB, as given. */
  declare readonly memoryMB: pulumi.Output<number | undefined>;
  /** The build, normalised. */
  declare readonly build: pulumi.Output<TemplateInputs["build"]>;
  /** The template ID; stable across rebuilds. */
  declare readonly templateID: pulumi.Output<string>;
  /** The build in use. */
  declare readonly buildID: pulumi.Output<string>;
  /** Every name of the template (with namespace and tag). */
  declare readonly names: pulumi.Output<string[]>;
  /** Whether the template is public. */
  declare readonly public: pulumi.Output<boolean>;
  /** The envd version of the build. */
  declare readonly envdVersion: pulumi.Output<string>;
  /** The status of the build in use. */
  declare readonly buildStatus: pulumi.Output<string>;
  /** The files hash of each COPY step. */
  declare readonly filesHashes: pulumi.Output<string[]>;
  /** The tags the service reports for the build in use (shows out-of-band changes after a refresh). */
  declare readonly currentTags: pulumi.Output<string[]>;

  constructor(name: string, args: TemplateArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("Template", args),
      declaredOptions("Template", args, opts),
      TYPE_MODULE,
      "Template",
    );
  }
}
