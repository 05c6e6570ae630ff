/**
 * `createSandboxClient`: the typed client of one sandbox's in-sandbox interface
 * (envd), over an injectable Connect transport and fetch.
 *
 * @module
 */
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { resolveConfig, type ResolvedConfig } from "../../config";
import { invalidArgument } from "../../errors";
import { Filesystem } from "../../gen/envd/filesystem/filesystem_pb";
import { Process } from "../../gen/envd/process/process_pb";
import { sandboxIDProblem } from "../../wire/ids";
import { createComposeApi, type ComposeApi } from "./compose";
import { DEFAULT_REQUEST_TIMEOUT_MS, OPS } from "./constants";
import type { SandboxContext } from "./context";
import { type Chmod, createFilesTransferApi, type FilesTransferApi } from "./files-transfer";
import { createFilesystemApi, type FilesystemApi } from "./filesystem";
import { baseHeaders } from "./headers";
import { postNodeStream } from "./node-upload";
import { createProcessApi, type ProcessApi } from "./process";
import { createPtyApi, type PtyApi } from "./pty";
import { createSigningApi, type SigningApi } from "./signing";
import { createStdinTransport } from "./stdin-transport";
import { createStatsApi, type StatsApi } from "./stats";
import { checkTimeoutMs, checkUser } from "./validate";
import { createWatchApi, type WatchApi } from "./watch";

/** Options of {@link createSandboxClient}. */
export interface SandboxClientOptions {
  /** The sandbox to talk to, as returned by create. */
  sandboxID: string;
  /**
   * The sandbox's `envdAccessToken`, sent as `X-Access-Token` and used to sign URLs.
   * @default none: works only for sandboxes created without `secure`
   */
  accessToken?: string | undefined;
  /**
   * Where sandboxes are reached; its `sandboxBaseUrl()` gives the URL and routing headers.
   * @default `resolveConfig()` (options, then `E2B_SANDBOX_URL` / `E2B_DOMAIN` / `E2B_API_URL`, then the local service), unless `baseUrl` is given
   */
  config?: Pick<ResolvedConfig, "sandboxBaseUrl"> | undefined;
  /**
   * envd base URL; wins over `config`. The routing headers are added anyway.
   * @default from `config`
   */
  baseUrl?: string | undefined;
  /**
   * Extra headers on every request; they win over computed ones.
   * @default none
   */
  headers?: Record<string, string> | undefined;
  /**
   * Connect transport for the RPCs (e.g. `createRouterTransport` in tests).
   * @default connect-node, HTTP/1.1, JSON codec, at the base URL
   */
  transport?: Transport | undefined;
  /**
   * fetch for the plain HTTP routes. It must decode `Content-Encoding` as the
   * Fetch standard says (undici does).
   * @default the global fetch, except that `uploadFile` then pipes the file into
   * node:http(s) (less CPU per byte than fetch; an injected fetch carries every request)
   */
  fetch?: typeof fetch | undefined;
  /**
   * The user calls act as unless they name one.
   * @default none: envd's default user (`user` in templates)
   */
  user?: string | undefined;
  /**
   * Deadline of unary calls and small HTTP requests, in ms; 0 means none.
   * Streams (start, watch) and file transfers have none unless the call sets one.
   * @default 60000
   */
  timeoutMs?: number | undefined;
}

/** The typed client of one sandbox: processes, terminals, filesystem, files. */
export interface SandboxClient
  extends
    ProcessApi,
    PtyApi,
    FilesystemApi,
    WatchApi,
    FilesTransferApi,
    ComposeApi,
    StatsApi,
    SigningApi {
  /** The sandbox every call goes to. */
  readonly sandboxID: string;
  /** The envd base URL in use. */
  readonly baseUrl: string;
}

/** Creates the client of one sandbox. Nothing is sent until a method is called. */
export function createSandboxClient(options: SandboxClientOptions): SandboxClient {
  const op = OPS.client;
  const idProblem = sandboxIDProblem(options?.sandboxID);
  if (idProblem !== undefined) {
    throw invalidArgument(
      op,
      "sandboxID",
      options?.sandboxID,
      idProblem.allowed,
      idProblem.fix ?? "pass the sandboxID returned by create",
    );
  }
  const { sandboxID } = options;
  const timeoutMs = checkTimeoutMs(op, options.timeoutMs) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const user = checkUser(op, options.user);
  let url: string;
  let routing: Record<string, string> = {};
  if (options.baseUrl !== undefined) {
    url = checkBaseUrl(op, options.baseUrl);
  } else {
    const address = (options.config ?? resolveConfig()).sandboxBaseUrl(sandboxID);
    url = checkBaseUrl(op, address.url);
    routing = address.headers;
  }
  const transport =
    options.transport ??
    createConnectTransport({ httpVersion: "1.1", useBinaryFormat: false, baseUrl: url });
  // Bulk stdin goes as binary protobuf, which envd and the agent take for
  // StreamInput: JSON would carry its bytes as base64, a third more to send
  // and encoded and decoded in JavaScript (seconds of CPU per 50 MB). Its
  // stdin messages are framed with one copy (stdin-transport.ts).
  const bulkTransport = options.transport ?? createStdinTransport(url);
  const ctx: SandboxContext = {
    sandboxID,
    baseUrl: url,
    headers: baseHeaders({
      sandboxID,
      accessToken: options.accessToken,
      headers: { ...routing, ...options.headers },
    }),
    accessToken: options.accessToken,
    user,
    timeoutMs,
    fetch: options.fetch ?? globalThis.fetch,
    streamPost: options.fetch === undefined ? postNodeStream : undefined,
    process: createClient(Process, transport),
    processInput: createClient(Process, bulkTransport),
    filesystem: createClient(Filesystem, transport),
  };
  const processApi = createProcessApi(ctx);
  const chmod: Chmod = async (path, mode, { user, signal }) => {
    await processApi.run("chmod", { args: [mode.toString(8), path], user, signal });
  };
  return {
    sandboxID,
    baseUrl: url,
    ...processApi,
    ...createPtyApi(ctx),
    ...createFilesystemApi(ctx),
    ...createWatchApi(ctx),
    ...createFilesTransferApi(ctx, chmod),
    ...createComposeApi(ctx),
    ...createStatsApi(ctx),
    ...createSigningApi(ctx),
  };
}

function checkBaseUrl(operation: string, value: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (
    !parsed ||
    (parsed.protocol !== "http:" && parsed.protocol !== "https:") ||
    parsed.search ||
    parsed.hash
  ) {
    throw invalidArgument(
      operation,
      "baseUrl",
      value,
      "an absolute http(s) URL without query or fragment",
    );
  }
  return parsed.href.replace(/\/+$/, "");
}
