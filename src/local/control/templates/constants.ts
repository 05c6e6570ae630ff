/**
 * Names, paths and limits used only by the templates side of the local
 * control service. Wire names shared with clients live in `src/wire/*`.
 *
 * @module
 */

/** The built-in template every service has. */
export const BASE_TEMPLATE_ID = "base";

/**
 * Route prefix of the template file upload target. The SDK PUTs there without
 * an API key, so every URL carries a random single-use token (see file-store.ts).
 */
export const UPLOAD_ROUTE_PREFIX = "/_sandbox-iac/template-files";

/** Folder under the data dir holding uploaded COPY archives, `<hash>.tar[.gz]`. */
export const TEMPLATE_FILES_DIR = "template-files";

/** Folder under the data dir holding the template catalog and build logs. */
export const TEMPLATES_DIR = "templates";

/** The catalog file inside {@link TEMPLATES_DIR}. */
export const CATALOG_FILE = "catalog.json";

/** Folder inside {@link TEMPLATES_DIR} holding one JSONL log file per build. */
export const BUILD_LOGS_DIR = "build-logs";

/** Log entries kept per build; later lines are dropped with one notice. */
export const MAX_LOG_ENTRIES_PER_BUILD = 10_000;

/** Build history kept per tag (older assignments are forgotten). */
export const MAX_TAG_HISTORY = 20;

/** How long an upload URL stays valid: the SDK's own upload timeout (1 h). */
export const UPLOAD_TOKEN_TTL_MS = 60 * 60 * 1000;

/** Template builds that run at the same time; later ones wait their turn. */
export const MAX_CONCURRENT_BUILDS = 2;

/** CPU cores of a template when the build request names none. */
export const DEFAULT_CPU_COUNT = 2;

/** Memory of a template in MiB when the build request names none. */
export const DEFAULT_MEMORY_MB = 512;

/**
 * The disk size reported for templates. The local runtime enforces no disk
 * quota, so the honest value is 0 ("not limited").
 */
export const REPORTED_DISK_SIZE_MB = 0;

/** How long the build waits for `readyCmd` to succeed once after `startCmd`. */
export const READY_CMD_TIMEOUT_MS = 60_000;

/** Pause between two `readyCmd` attempts. */
export const READY_CMD_RETRY_MS = 500;

/** Characters of stderr quoted in a failed step's reason. */
export const STDERR_TAIL_CHARS = 1_000;

/** Message of builds found in `building` state when the service starts. */
export const INTERRUPTED_BUILD_MESSAGE = "interrupted by a service restart";

/** Build step names the SDK treats specially (`getBuildStepIndex`). */
export const BUILD_STEP = {
  /** The `from*` part of the template: stack trace index 0. */
  base: "base",
  /** The start and ready commands: the last stack trace. */
  finalize: "finalize",
} as const;

/** Default and maximum page size of `GET /snapshots` and `GET /v2/templates`. */
export const MAX_PAGE_SIZE = 100;
