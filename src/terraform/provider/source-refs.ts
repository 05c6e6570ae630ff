/**
 * Dependents wired to a plain ID instead of its versioned reference
 * (`core/refs.ts`): `template = sandboxiac_template.app.template_id` names the
 * same template across builds, so a rebuild never runs the Provisioner again.
 * Terraform never tells a provider where a value comes from, so the provider
 * reads the configuration as written (`source-keys.ts`) and warns, with the
 * reference to give instead, in HCL names, wherever the plain output appears
 * in the expression written (also inside a function call).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  AttributePathSchema,
  AttributePath_StepSchema,
  type Diagnostic,
} from "../../gen/terraform/tfplugin6_pb";
import { FOLLOWED_LINKS, unfollowedReason } from "../../resources/core/refs";
import type { TfBlock } from "../schema/model";
import { snakeCase, terraformTypeName } from "../schema/names";
import type { TfValue } from "../values/dynamic-value";
import { warningDiagnostic } from "./diagnostics";
import { agreeingBlocks } from "./source-keys";

/** Blocks already warned about by this provider process: one warning each. */
const warned = new Set<string>();

/**
 * Warnings for the blocks of resource type `typeName` that may have produced
 * `config` and give a dependent input the plain output of what they start
 * from (`sandboxiac_template.app.template_id`, also with a `count` or
 * `for_each` index).
 */
export async function unfollowedRefDiagnostics(
  typeName: string,
  block: TfBlock,
  config: Record<string, TfValue> | null,
  root: string,
): Promise<Diagnostic[]> {
  const links = FOLLOWED_LINKS.filter((l) => terraformTypeName(l.dependent) === typeName);
  if (config === null || links.length === 0) return [];
  const out: Diagnostic[] = [];
  for (const { address, written } of await agreeingBlocks(
    "resource",
    typeName,
    block,
    config,
    root,
  )) {
    for (const link of links) {
      const input = snakeCase(link.input);
      const source = terraformTypeName(link.source);
      const value = written[input];
      // An expression (`${...}`) naming the plain output anywhere: as the whole value, or
      // inside a function or a template (`lower(...)`, `"${...}"`). One that also has an `@`
      // builds its own versioned reference and is left alone; `data.` ones are data sources.
      if (typeof value !== "string" || !value.includes("${") || value.includes("@")) continue;
      const m = new RegExp(
        `(?<![\\w.-])(${source}\\.[A-Za-z_][\\w-]*(?:\\[[^\\]]*\\])?)\\.${snakeCase(link.plain)}(?![\\w-])`,
      ).exec(value);
      if (!m || warned.has(`${address}.${input}`)) continue;
      warned.add(`${address}.${input}`);
      const from = m[1];
      out.push(
        warningDiagnostic(
          `${address}: ${input} does not follow ${from}`,
          `${address}: ${unfollowedReason(link, {
            input,
            plain: `${from}.${snakeCase(link.plain)}`,
            ref: `${from}.${snakeCase(link.ref)}`,
          })} (${input} = ${from}.${snakeCase(link.ref)})`,
          create(AttributePathSchema, {
            steps: [
              create(AttributePath_StepSchema, {
                selector: { case: "attributeName", value: input },
              }),
            ],
          }),
        ),
      );
    }
  }
  return out;
}
