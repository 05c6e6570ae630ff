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

/** What the ready line tells of a service. */
export interface ReadyService {
  apiUrl: string;
  sandboxUrl: string;
  /** `getHost(port)` is `<port>-<id>.<domain>`, which the service routes by Host. */
  domain: string;
  /** Serving HTTPS in the cloud's shape: the SDK derives every URL from the domain. */
  tls: boolean;
  apiKey: string;
}

/** The ready line of `service` (the one line with the key in clear: the user's own terminal). */
export function readyLine(service: ReadyService): string {
  const urls = service.tls
    ? ""
    : `${ENV_VARS.apiUrl}=${service.apiUrl} ${ENV_VARS.sandboxUrl}=${service.sandboxUrl} ` +
      `${VOLUME_API_URL}=${service.apiUrl} `;
  return (
    `sandbox-iac: ready on ${service.apiUrl} ${urls}` +
    `${ENV_VARS.domain}=${service.domain} ${ENV_VARS.apiKey}=${service.apiKey}\n`
  );
}
