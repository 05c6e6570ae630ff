/**
 * The provider configuration block: the same four settings as
 * `resolveConfig` (src/config.ts), in Terraform's names.
 *
 * @module
 */
import { z } from "zod";

/** The `provider "sandboxiac"` arguments (core names; Terraform shows them in snake_case). */
export const providerConfigSchema = z.strictObject({
  apiUrl: z
    .string()
    .optional()
    .meta({
      description:
        "Base URL of the control API, e.g. `http://127.0.0.1:3000`. Default: E2B_API_URL; else " +
        "`https://api.<domain>` when a domain is set; else the local service `http://127.0.0.1:3000`.",
    }),
  sandboxUrl: z
    .string()
    .optional()
    .meta({
      description:
        "One URL serving every sandbox (chosen by routing headers). Default: E2B_SANDBOX_URL; else " +
        "`https://<port>-<sandboxID>.<domain>`, or the API URL when no domain is set.",
    }),
  domain: z
    .string()
    .optional()
    .meta({ description: "The service's domain, e.g. `e2b.app`. Default: E2B_DOMAIN; else none." }),
  apiKey: z.string().optional().meta({
    description:
      "The API key sent as X-API-Key. Default: E2B_API_KEY; else none. Never stored in state.",
  }),
});

/** Provider arguments that are secrets. */
export const SENSITIVE_PROVIDER_FIELDS = ["apiKey"] as const;

/** The provider configuration as the provider receives it (nulls dropped). */
export type ProviderConfigInput = z.infer<typeof providerConfigSchema>;
