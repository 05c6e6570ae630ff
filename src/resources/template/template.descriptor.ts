/**
 * The descriptor of the `Template` resource.
 *
 * @module
 */
import type { ResourceDescriptor } from "../core/descriptor";
import {
  templateArgsSchema,
  templateChangeRules,
  templateOutputRules,
  templateOutputsSchema,
  templateSensitiveInputs,
  type TemplateInputs,
  type TemplateOutputs,
} from "./template.args";
import { templateLifecycle } from "./template.lifecycle";

/** `Template`: a named template built from a base and steps. */
export const templateDescriptor: ResourceDescriptor<TemplateInputs, TemplateOutputs> = {
  kind: "resource",
  typeName: "Template",
  description:
    "A named template built by the service from a base template (or image) and build steps, as the official SDK builds it. A new name replaces it; new tags are re-assigned; a new build, new resources or a changed COPY source makes a new build of the same template.",
  version: 0,
  args: templateArgsSchema,
  outputs: templateOutputsSchema,
  changeRules: templateChangeRules,
  outputRules: templateOutputRules,
  sensitiveInputs: templateSensitiveInputs,
  sensitiveOutputs: [],
  replacement: {
    deleteFirst: false,
    reason: "a new name is a new template, so the old one can go after the new one is built",
  },
  lifecycle: templateLifecycle,
};
