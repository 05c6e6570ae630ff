/**
 * Validation: every problem `check` finds becomes a diagnostic on its
 * attribute path, so `terraform validate` lists them all at once.
 *
 * @module
 */
import type { Diagnostic } from "../../gen/terraform/tfplugin6_pb";
import type { CheckFailure } from "../../resources/core/lifecycle";
import type { TfAttribute } from "../schema/model";
import { attributePath } from "../values/convert";
import { errorDiagnostic } from "./diagnostics";

/** The Terraform spelling of a core property path: `build.steps.2.run` -> `build.steps[2].run`. */
export function pathText(attributes: readonly TfAttribute[], property: string): string {
  const path = attributePath(attributes, property);
  let text = "";
  for (const step of path.steps) {
    const s = step.selector;
    if (s.case === "attributeName") text += text ? `.${s.value}` : s.value;
    else if (s.case === "elementKeyInt") text += `[${s.value}]`;
    else if (s.case === "elementKeyString") text += `[${JSON.stringify(s.value)}]`;
  }
  return text || "(configuration)";
}

/** One diagnostic per failure, each on its attribute. */
export function failureDiagnostics(
  attributes: readonly TfAttribute[],
  failures: readonly CheckFailure[],
): Diagnostic[] {
  return failures.map((f) =>
    errorDiagnostic(
      `Invalid ${pathText(attributes, f.property)}`,
      `${pathText(attributes, f.property)} ${f.reason}`,
      attributePath(attributes, f.property),
    ),
  );
}
