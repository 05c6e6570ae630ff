/**
 * The `template` data source (provider-neutral).
 *
 * @module
 */
export { templateDataSource } from "./template.descriptor";
export type { TemplateDataArgs, TemplateDataResult } from "./template.args";
