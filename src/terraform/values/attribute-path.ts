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
import type { TfAttribute } from "../schema/model";
import { propertySteps } from "../schema/naming";

/**
 * A core property path (`build.steps.2.run`, as `check` reports it) as a
 * Terraform attribute path (`build.steps[2].run`). Segments that do not match
 * the schema end the path where it stopped matching.
 */
export function attributePath(attributes: readonly TfAttribute[], property: string): AttributePath {
  const steps = propertySteps(attributes, property).map((step) =>
    create(AttributePath_StepSchema, {
      selector:
        step.kind === "attribute"
          ? { case: "attributeName", value: step.attribute.name }
          : step.kind === "index"
            ? { case: "elementKeyInt", value: BigInt(step.index) }
            : { case: "elementKeyString", value: step.key },
    }),
  );
  return create(AttributePathSchema, { steps });
}

/** The path of one top-level attribute. */
export function topLevelPath(name: string): AttributePath {
  return create(AttributePathSchema, {
    steps: [create(AttributePath_StepSchema, { selector: { case: "attributeName", value: name } })],
  });
}
