/**
 * Attribute paths: where in a Terraform object a diagnostic or a
 * requires_replace points, derived from the core's dotted property paths
 * along the same attribute tree that produced the published schema.
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  type AttributePath,
  AttributePathSchema,
  AttributePath_StepSchema,
} from "../../gen/terraform/tfplugin6_pb";
import type { TfAttribute, TfType } from "../schema/model";

/**
 * A core property path (`build.steps.2.run`, as `check` reports it) as a
 * Terraform attribute path (`build.steps[2].run`). Segments that do not match
 * the schema end the path where it stopped matching.
 */
export function attributePath(attributes: readonly TfAttribute[], property: string): AttributePath {
  const steps = [];
  let attrs: readonly TfAttribute[] | undefined = attributes;
  let type: TfType | undefined;
  for (const segment of property.split(".").filter((s) => s !== "" && s !== "(inputs)")) {
    if (attrs) {
      const attr: TfAttribute | undefined = attrs.find(
        (a) => a.coreName === segment || a.name === segment,
      );
      if (!attr) break;
      steps.push(
        create(AttributePath_StepSchema, { selector: { case: "attributeName", value: attr.name } }),
      );
      type = attr.type;
    } else if (type?.kind === "list" && /^\d+$/.test(segment)) {
      steps.push(
        create(AttributePath_StepSchema, {
          selector: { case: "elementKeyInt", value: BigInt(segment) },
        }),
      );
      type = type.element;
    } else if (type?.kind === "map") {
      steps.push(
        create(AttributePath_StepSchema, {
          selector: { case: "elementKeyString", value: segment },
        }),
      );
      type = type.element;
    } else {
      break;
    }
    attrs = type?.kind === "object" ? type.attributes : undefined;
  }
  return create(AttributePathSchema, { steps });
}

/** The path of one top-level attribute. */
export function topLevelPath(name: string): AttributePath {
  return create(AttributePathSchema, {
    steps: [create(AttributePath_StepSchema, { selector: { case: "attributeName", value: name } })],
  });
}
