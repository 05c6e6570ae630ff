/**
 * The descriptor of the `template` data source.
 *
 * @module
 */
import type { DataSourceDescriptor } from "../../core/descriptor";
import {
  templateDataArgsSchema,
  templateDataResultSchema,
  type TemplateDataArgs,
  type TemplateDataResult,
} from "./template.args";
import { readTemplate } from "./template.read";

/** `template`: a template by name or ID, with the build its tag points to. */
export const templateDataSource: DataSourceDescriptor<TemplateDataArgs, TemplateDataResult> = {
  kind: "data",
  typeName: "template",
  description:
    "Reads a template by name ([namespace/]alias[:tag]) or ID, with the build its tag points to.",
  args: templateDataArgsSchema,
  result: templateDataResultSchema,
  sensitiveOutputs: [],
  read: readTemplate,
};
