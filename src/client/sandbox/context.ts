/**
 * The state every part of the sandbox client shares: where the sandbox is,
 * which headers to send, and the two injected transports (Connect and fetch).
 *
 * @internal
 * @module
 */
import type { CallOptions, Client } from "@connectrpc/connect";
import type { Filesystem } from "../../gen/envd/filesystem/filesystem_pb";
import type { Process } from "../../gen/envd/process/process_pb";
import type { ErrorScope } from "./errors";
import type { StreamPost } from "./node-upload";
import { keepaliveHeaders, mergeHeaders, userHeaders, type HeaderRecord } from "./headers";

/** Shared state of one sandbox client. @internal */
export interface SandboxContext {
  /** The sandbox every call goes to. */
  readonly sandboxID: string;
  /** envd base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** Routing, token and caller headers sent on every request. */
  readonly headers: HeaderRecord;
  /** The sandbox access token, for URL signing. */
  readonly accessToken: string | undefined;
  /** The user calls act as unless they name one; undefined lets envd decide. */
  readonly user: string | undefined;
  /** Deadline of unary calls and plain HTTP requests; 0 means none. */
  readonly timeoutMs: number;
  /** fetch for the plain HTTP routes. */
  readonly fetch: typeof fetch;
  /**
   * Streamed uploads from disk without fetch (`node-upload.ts`); set only
   * when `fetch` is the default, so an injected fetch still carries every
   * request.
   */
  readonly streamPost?: StreamPost | undefined;
  /** Connect client of `process.Process`. */
  readonly process: Client<typeof Process>;
  /** Connect client of `process.Process` for bulk stdin (`StreamInput`), in binary protobuf. */
  readonly processInput: Client<typeof Process>;
  /** Connect client of `filesystem.Filesystem`. */
  readonly filesystem: Client<typeof Filesystem>;
}

/** Per-call knobs shared by RPC helpers. @internal */
export interface RpcCallInput {
  /** Acts as this user (adds `Authorization`). */
  user?: string | undefined;
  /** Adds `Keepalive-Ping-Interval`: for server streams. */
  stream?: boolean | undefined;
  /** Deadline in ms (`Connect-Timeout-Ms`); undefined uses the client default, 0 none. */
  timeoutMs?: number | undefined;
  /** Aborts the call. */
  signal?: AbortSignal | undefined;
}

/**
 * Connect call options: headers per call rather than transport interceptors,
 * so an injected transport gets exactly the same headers as ours.
 */
export function rpcOptions(ctx: SandboxContext, input: RpcCallInput = {}): CallOptions {
  const timeoutMs = input.timeoutMs ?? (input.stream ? 0 : ctx.timeoutMs);
  const options: CallOptions = {
    headers: mergeHeaders(
      ctx.headers,
      userHeaders(input.user),
      input.stream ? keepaliveHeaders() : undefined,
    ),
  };
  // connect-es treats timeoutMs <= 0 as already expired; "no limit" means leaving it out.
  if (timeoutMs > 0) options.timeoutMs = timeoutMs;
  if (input.signal) options.signal = input.signal;
  return options;
}

/** The user a call acts as: its own, else the client's default. */
export function effectiveUser(ctx: SandboxContext, user: string | undefined): string | undefined {
  return user ?? ctx.user;
}

/** The error scope of a call in this sandbox about `resourceId` (a path, pid or watcher). */
export function callScope(
  ctx: SandboxContext,
  operation: string,
  resourceId: string | undefined,
  signal?: AbortSignal,
): ErrorScope {
  return { operation, sandboxID: ctx.sandboxID, resourceId, signal };
}
