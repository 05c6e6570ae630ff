/**
 * Provider settings: where the service is and the credentials, taken from
 * stack config in `configure()` (never from inputs or state).
 *
 * @module
 */
import { resolveConfig, type ResolvedConfig } from "../config";

/** The values `configure()` keeps; each falls back to its environment variable when absent. */
export interface ProviderSettings {
  apiKey?: string | undefined;
  apiUrl?: string | undefined;
  sandboxUrl?: string | undefined;
  domain?: string | undefined;
}

/** Resolves settings into a config, with `E2B_*` environment variables as the fallback. */
export function configFromSettings(settings: ProviderSettings | undefined): ResolvedConfig {
  return resolveConfig({
    apiKey: settings?.apiKey,
    apiUrl: settings?.apiUrl,
    sandboxUrl: settings?.sandboxUrl,
    domain: settings?.domain,
    log: (line) => console.log(line),
    optionNames: { apiKey: "sandbox-iac:apiKey config", apiUrl: "sandbox-iac:apiUrl config" },
  });
}
