/**
 * The Template resource (provider-neutral).
 *
 * @module
 */
export { templateDescriptor } from "./template.descriptor";
export { templateLifecycle } from "./template.lifecycle";
export { templateArgsSchema, templateChangeRules, templateOutputsSchema } from "./template.args";
export type { TemplateArgs, TemplateOutputs } from "./template.args";
