/**
 * Names and defaults used only by the sandbox client. Wire names shared with
 * the server live in `src/wire/envd.ts`; these are client-side choices.
 *
 * @module
 */

/**
 * Seconds between keepalives the client asks for on streams. The official SDK
 * sends 50, below common 60 s idle timeouts of proxies between us and envd.
 */
export const CLIENT_KEEPALIVE_SECONDS = 50;

/** Default deadline of unary calls and plain HTTP requests, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** The shell that runs a command line, as the official SDK does. */
export const SHELL = "/bin/bash";
/** Arguments before the command line: a login shell, so profile PATHs apply. */
export const SHELL_ARGS = ["-l", "-c"] as const;
/** Arguments of the interactive login shell a PTY starts. */
export const PTY_SHELL_ARGS = ["-i", "-l"] as const;
/** Environment a PTY gets unless the caller sets these names. */
export const PTY_DEFAULT_ENVS: Readonly<Record<string, string>> = {
  TERM: "xterm-256color",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
};

/** How many bytes of stderr (then stdout) a `command_failed` message quotes. */
export const ERROR_OUTPUT_TAIL_BYTES = 2048;

/** JSON field names of `POST /files/compose` (snake_case on the wire). */
export const COMPOSE_FIELDS = {
  sourcePaths: "source_paths",
  destination: "destination",
  username: "username",
} as const;

/** Request and response headers of plain HTTP content negotiation. */
export const HTTP_HEADERS = {
  contentType: "Content-Type",
  contentEncoding: "Content-Encoding",
  acceptEncoding: "Accept-Encoding",
} as const;

/** The content coding for gzip. */
export const GZIP = "gzip";

/** Operation names carried by errors, in API terms. */
export const OPS = {
  processStart: "process.start",
  processRun: "process.run",
  processConnect: "process.connect",
  processList: "process.list",
  processSendInput: "process.sendInput",
  processStreamInput: "process.streamInput",
  processCloseStdin: "process.closeStdin",
  processSendSignal: "process.sendSignal",
  processKill: "process.kill",
  ptyStart: "pty.start",
  ptySendInput: "pty.sendInput",
  ptyResize: "pty.resize",
  fsStat: "filesystem.stat",
  fsMakeDir: "filesystem.makeDir",
  fsMove: "filesystem.move",
  fsListDir: "filesystem.listDir",
  fsRemove: "filesystem.remove",
  fsWatchDir: "filesystem.watchDir",
  fsCreateWatcher: "filesystem.createWatcher",
  fsGetWatcherEvents: "filesystem.getWatcherEvents",
  fsRemoveWatcher: "filesystem.removeWatcher",
  filesUpload: "files.upload",
  filesDownload: "files.download",
  filesRead: "files.read",
  filesCompose: "files.compose",
  filesSignUrl: "files.signUrl",
  metrics: "sandbox.metrics",
  envs: "sandbox.envs",
  health: "sandbox.health",
  client: "sandboxClient.create",
} as const;
