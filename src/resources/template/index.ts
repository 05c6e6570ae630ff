/**
 * The Template resource (provider-neutral).
 *
 * @module
 */
export { templateLifecycle } from "./template.lifecycle";
export { templateArgsSchema, templateChangeRules } from "./template.args";
export type { TemplateArgs, TemplateInputs, TemplateOutputs } from "./template.args";
export { calculateFilesHash, resolveCopySource } from "./template.files";
