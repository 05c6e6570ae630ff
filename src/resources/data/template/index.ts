/**
 * The `template` data source (provider-neutral).
 *
 * @module
 */
export { templateDataSource } from "./template.descriptor";
export { templateDataArgsSchema, templateDataResultSchema } from "./template.args";
export type { TemplateDataArgs, TemplateDataResult } from "./template.args";
export { readTemplate } from "./template.read";
