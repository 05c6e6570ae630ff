/**
 * Wire names of the in-sandbox interface (envd): headers, routes, ports and the
 * reported version. Every header or route literal for envd lives here.
 * Reference: docs/envd.md.
 *
 * @module
 */

/** The port envd listens on inside a sandbox; part of every sandbox address. */
export const ENVD_PORT = 49983;

/**
 * The envd version the local service reports. It unlocks exactly the SDK code
 * paths the local agent implements (metadata headers, gzip and octet-stream
 * uploads, includeEntry, closeStdin, allowNetworkMounts refusal).
 */
export const ENVD_VERSION = "0.6.13";

/** Request and response headers of the envd interface. */
export const ENVD_HEADERS = {
  /** The sandbox access token (`envdAccessToken`). */
  accessToken: "X-Access-Token",
  /** Routing: the sandbox to reach when one URL serves every sandbox. */
  sandboxID: "E2b-Sandbox-Id",
  /** Routing: the port inside the sandbox. */
  sandboxPort: "E2b-Sandbox-Port",
  /** The `trafficAccessToken` of a sandbox created with `network.allowPublicTraffic: false`. */
  trafficAccessToken: "E2b-Traffic-Access-Token",
  /** Connect: the call deadline in milliseconds; on Start also the process lifetime. */
  connectTimeoutMs: "Connect-Timeout-Ms",
  /** Connect: the protocol version, always `1`. */
  connectProtocolVersion: "Connect-Protocol-Version",
  /** Seconds between keepalive messages on idle streams. */
  keepalivePingInterval: "Keepalive-Ping-Interval",
  /** The user to act as, `Basic base64("<user>:")`. */
  authorization: "Authorization",
  /** Answered by `/init`. */
  envdVersion: "X-Envd-Version",
  /** Prefix of file-metadata headers on `POST /files`. */
  metadataPrefix: "X-Metadata-",
} as const;

/**
 * Largest Connect request body the agent takes (a unary message, or a
 * stream's whole body; for binary `StreamInput`, each message, in the agent
 * and in the service's direct stdin alike): the biggest legitimate one is a
 * `SendInput` chunk, far below this.
 */
export const RPC_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Plain HTTP routes of envd. */
export const ENVD_ROUTES = {
  health: "/health",
  metrics: "/metrics",
  envs: "/envs",
  init: "/init",
  files: "/files",
  compose: "/files/compose",
} as const;

/**
 * Routes of the local agent that are not part of the public envd contract.
 * The control service uses them to build templates; they require the access
 * token like every other non-file route.
 */
export const AGENT_INTERNAL_ROUTES = {
  /** POST a tar (optionally gzipped) archive; query `path` (destination dir), `username`. */
  extract: "/_sandbox-iac/extract",
  /**
   * GET, query `pid` or `tag`: the agent's own descriptor of that process's
   * stdin pipe, for the service to write a binary `StreamInput` into
   * (`src/wire/direct-stdin.ts`).
   */
  stdinPipe: "/_sandbox-iac/stdin-pipe",
} as const;

/** Query parameters of the `/files` routes. */
export const FILES_QUERY = {
  path: "path",
  username: "username",
  signature: "signature",
  signatureExpiration: "signature_expiration",
} as const;

/** Content types used on the envd interface. */
export const CONTENT_TYPES = {
  json: "application/json",
  connectJson: "application/connect+json",
  octetStream: "application/octet-stream",
  multipart: "multipart/form-data",
} as const;

/** The default user inside a sandbox and its home. */
export const DEFAULT_USER = "user";
/** Home directory of {@link DEFAULT_USER}. */
export const DEFAULT_USER_HOME = "/home/user";
/** The keepalive interval envd falls back to, in seconds. */
export const DEFAULT_KEEPALIVE_SECONDS = 90;
