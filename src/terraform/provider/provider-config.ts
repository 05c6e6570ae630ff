/**
 * ValidateProviderConfig and ConfigureProvider: the provider block, then
 * `E2B_*`, then the local default, resolved by the same `resolveConfig` every
 * other entry point uses.
 *
 * @module
 */
import { type ResolvedConfig, resolveConfig } from "../../config";
import type { Diagnostic } from "../../gen/terraform/tfplugin6_pb";
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "../../resources/core/check";
import type { TfBlock } from "../schema/model";
import { type ProviderConfigInput, providerConfigSchema } from "../schema/provider-config";
import { holdsUnknown } from "../../resources/core/planned-change";
import { attributePath } from "../values/attribute-path";
import { isUnknown } from "../values/dynamic-value";
import { errorDiagnostic } from "./diagnostics";
import { failureDiagnostics } from "./validate";

/** The provider block's names of the key and URL, for error messages. */
const TERRAFORM_OPTION_NAMES = {
  apiKey: "api_key in the provider block",
  apiUrl: "api_url in the provider block",
};

/**
 * Problems in the provider block, read as core values (values still unknown
 * are checked at configure time).
 */
export function validateProviderConfig(
  block: TfBlock,
  core: Record<string, unknown>,
): Diagnostic[] {
  const checked = checkWithSchema(providerConfigSchema, core, { isUnknown });
  if (checked.failures.length > 0) return failureDiagnostics(block.attributes, checked.failures);
  if (holdsUnknown(core, isUnknown)) return [];
  const resolved = resolve(block, core, () => undefined, false);
  return "diagnostics" in resolved ? resolved.diagnostics : [];
}

/** The resolved configuration, or why it cannot be resolved. */
export function resolve(
  block: TfBlock,
  core: ProviderConfigInput,
  log: (line: string) => void,
  announce = true,
): { config: ResolvedConfig } | { diagnostics: Diagnostic[] } {
  try {
    return {
      config: resolveConfig({
        apiUrl: core.apiUrl,
        sandboxUrl: core.sandboxUrl,
        domain: core.domain,
        apiKey: core.apiKey,
        log,
        // Validation only looks for problems: the notice of the local default
        // is left for the configuration the provider uses.
        announce,
        optionNames: TERRAFORM_OPTION_NAMES,
      }),
    };
  } catch (err) {
    const field = SandboxIacError.is(err) ? err.field : undefined;
    const attr = block.attributes.find((a) => a.coreName === field);
    return {
      diagnostics: [
        errorDiagnostic(
          "Invalid provider configuration",
          err instanceof Error ? err.message : String(err),
          attr ? attributePath(block.attributes, attr.coreName) : undefined,
        ),
      ],
    };
  }
}
