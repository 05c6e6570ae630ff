/**
 * The `Template` dynamic resource: a named template built from a base and
 * steps. See `src/resources/template/template.md`.
 *
 * @module
 */
import type { TemplateArgs as TemplateInputArgs } from "../resources/template/template.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link Template}: `[namespace/]alias[:tag]` name, tags, resources and the build. */
export type TemplateArgs = ResourceArgs<TemplateInputArgs>;

/**
 * A template built by the service. A name change replaces it; a change of tags
 * re-assigns them; a change of the build (steps, base, a COPY source's content)
 * or of `cpuCount`/`memoryMB` makes a new build of the same template (same ID).
 */
export class Template extends dynamicResourceClass("Template") {}
