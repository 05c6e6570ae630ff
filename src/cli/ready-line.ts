/**
 * The line `sandbox-iac serve` prints once it answers: everything the e2b SDK
 * and CLI, the sandbox-iac clients and the Terraform and Pulumi providers
 * need to reach it, as `NAME=value` pairs a shell can export.
 *
 * @module
 */
import { ENV_VARS } from "../wire/control";

/** `E2B_VOLUME_API_URL`: where the e2b SDK reaches volume content; this service serves it too. */
const VOLUME_API_URL = "E2B_VOLUME_API_URL";

/** The ready line of a service at `apiUrl` (the one line with the key in clear: the user's own terminal). */
export function readyLine(service: { apiUrl: string; sandboxUrl: string; apiKey: string }): string {
  return (
    `sandbox-iac: ready on ${service.apiUrl} ` +
    `${ENV_VARS.apiUrl}=${service.apiUrl} ${ENV_VARS.sandboxUrl}=${service.sandboxUrl} ` +
    `${VOLUME_API_URL}=${service.apiUrl} ${ENV_VARS.apiKey}=${service.apiKey}\n`
  );
}
