/**
 * The `Template` dynamic resource: a named template built from a base and
 * steps. See `src/resources/template/template.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  TemplateArgs as TemplateInputArgs,
  TemplateOutputs,
} from "../resources/template/template.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
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
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Template extends pulumi.dynamic.Resource {
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

/**
 * The properties of {@link Template}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/template/template.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Template extends OutputProperties<TemplateOutputs> {}
