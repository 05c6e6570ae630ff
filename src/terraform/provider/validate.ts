/**
 * Validation: every problem `check` finds becomes a diagnostic on its
 * attribute path, so `terraform validate` lists them all at once.
 *
 * @module
 */
import type { Diagnostic } from "../../gen/terraform/tfplugin6_pb";
import type { CheckFailure } from "../../resources/core/lifecycle";
import type { TfAttribute } from "../schema/model";
import { inAdapterNames, propertyPathText, renamedFields, terraformName } from "../schema/naming";
import { attributePath } from "../values/attribute-path";
import { errorDiagnostic } from "./diagnostics";

/** The Terraform spelling of a core property path: `build.steps.2.run` -> `build.steps[2].run`. */
function pathText(attributes: readonly TfAttribute[], property: string): string {
  return propertyPathText(attributes, property, terraformName);
}

/** A failure's reason with the fields it names in Terraform's names (`from_template`). */
function reasonText(attributes: readonly TfAttribute[], reason: string): string {
  return inAdapterNames(reason, renamedFields(attributes, terraformName));
}

/** One diagnostic per failure, each on its attribute, in Terraform's names. */
export function failureDiagnostics(
  attributes: readonly TfAttribute[],
  failures: readonly CheckFailure[],
): Diagnostic[] {
  return failures.map((f) =>
    errorDiagnostic(
      `Invalid ${pathText(attributes, f.property)}`,
      `${pathText(attributes, f.property)} ${reasonText(attributes, f.reason)}`,
      attributePath(attributes, f.property),
    ),
  );
}
