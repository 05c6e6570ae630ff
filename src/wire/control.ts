/**
 * Wire names of the control API: headers, environment variables and defaults.
 * Every header or environment-variable literal for the control API lives here.
 * Reference: docs/control-api.md.
 *
 * @module
 */

/** Request and response headers of the control API. */
export const CONTROL_HEADERS = {
  /** The API key, `e2b_<hex>`. */
  apiKey: "X-API-Key",
  /** Cursor of the next page; present only when another page exists. */
  nextToken: "X-Next-Token",
  /** Count of running sandboxes, on `GET /v2/sandboxes` when running ones were asked for. */
  totalRunning: "X-Total-Running",
  /** Seconds (or an HTTP date) to wait before retrying a 429 or 503. */
  retryAfter: "Retry-After",
} as const;

/** Environment variables read by the configuration. */
export const ENV_VARS = {
  apiKey: "E2B_API_KEY",
  apiUrl: "E2B_API_URL",
  sandboxUrl: "E2B_SANDBOX_URL",
  domain: "E2B_DOMAIN",
} as const;

/** The embedded default: the local service started by `sandbox-iac serve`. */
export const LOCAL_DEFAULT_API_URL = "http://127.0.0.1:3000";

/** The default template of a new sandbox. */
export const DEFAULT_TEMPLATE = "base";

/** A paused sandbox always reports this deprecated `clientID`. */
export const PAUSED_CLIENT_ID = "6532622b";
