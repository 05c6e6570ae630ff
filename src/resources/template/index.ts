/**
 * The Template resource (provider-neutral).
 *
 * @module
 */
export { templateDescriptor } from "./template.descriptor";
export { templateLifecycle } from "./template.lifecycle";
export {
  normaliseTemplateInputs,
  templateArgsSchema,
  templateChangeRules,
  templateOutputRules,
  templateOutputsSchema,
} from "./template.args";
export type { TemplateArgs, TemplateInputs, TemplateOutputs } from "./template.args";
export { calculateFilesHash, resolveCopySource } from "./template.files";
