/**
 * The typed control-API client: every endpoint of schema/control.openapi.yaml
 * as a method, on openapi-fetch with the generated `paths` type.
 *
 * @module
 */

import createClient from "openapi-fetch";
import { type ResolvedConfig, resolveConfig } from "../../config";
import { invalidArgument, redact } from "../../errors";
import { serviceSetup } from "./errors";
import type { paths } from "../../gen/control.gen";
import { CONTROL_HEADERS } from "../../wire/control";
import type { RetryPolicy } from "../retry";
import { buildMethods, type BuildMethods } from "./builds";
import type { CallContext } from "./call";
import { metricsMethods, type MetricsMethods } from "./metrics";
import { sandboxListMethods, type SandboxListMethods } from "./sandbox-list";
import { sandboxMethods, type SandboxMethods } from "./sandboxes";
import { forkMethods, type ForkMethods } from "./fork";
import { secretMethods, type SecretMethods } from "./secrets";
import { snapshotMethods, type SnapshotMethods } from "./snapshots";
import { tagMethods, type TagMethods } from "./tags";
import { templateMethods, type TemplateMethods } from "./templates";
import { templateUploadMethods, type TemplateUploadMethods } from "./template-upload";
import { volumeMethods, type VolumeMethods } from "./volumes";

/** Options of {@link createControlClient}. */
export interface ControlClientOptions {
  /**
   * Where the API is and which key to send.
   * @default `resolveConfig()`: options, then E2B_* variables, then the local service
   */
  config?: ResolvedConfig | undefined;
  /**
   * The fetch implementation; inject one to test or to route through a proxy.
   * @default the global `fetch`
   */
  fetch?: typeof fetch | undefined;
  /**
   * Deadline of one call, retries included, in ms.
   * @default 60 000
   */
  timeoutMs?: number | undefined;
  /**
   * Retries of idempotent calls after a 429, 502, 503, 504 or a connection failure.
   * @default 3
   */
  retries?: number | undefined;
  /**
   * Backoff tunables beyond the count.
   * @default 250 ms doubling, jittered, at most 30 s per wait
   */
  retryPolicy?: Omit<RetryPolicy, "retries"> | undefined;
  /**
   * Receives one line per retry and the configuration notice; never secrets.
   * @default writes to stderr
   */
  log?: ((line: string) => void) | undefined;
}

/** Every control-API method. Each takes per-call options `{ signal, timeoutMs, headers }` last. */
export interface ControlClient
  extends
    SandboxMethods,
    SandboxListMethods,
    MetricsMethods,
    SnapshotMethods,
    ForkMethods,
    TemplateMethods,
    TemplateUploadMethods,
    BuildMethods,
    TagMethods,
    VolumeMethods,
    SecretMethods {
  /** The configuration the client uses (its API key is not shown when printed). */
  readonly config: ResolvedConfig;
}

/** Creates a {@link ControlClient}. */
export function createControlClient(options: ControlClientOptions = {}): ControlClient {
  const log = options.log ?? ((line: string) => process.stderr.write(`${redact(line)}\n`));
  const config = options.config ?? resolveConfig({ log });
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw invalidArgument(
      "control.createClient",
      "timeoutMs",
      timeoutMs,
      "a positive number of milliseconds",
    );
  }
  const retries = options.retries ?? 3;
  if (!Number.isInteger(retries) || retries < 0 || retries > 10) {
    throw invalidArgument("control.createClient", "retries", retries, "an integer in 0..10");
  }
  const headers: Record<string, string> = {};
  if (config.apiKey !== undefined) headers[CONTROL_HEADERS.apiKey] = config.apiKey;
  // Read the global lazily so that a fetch installed later is still used.
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const api = createClient<paths>({
    baseUrl: config.apiUrl,
    headers,
    fetch: (input: Request) => fetchImpl(input),
    // `state=running,paused` and `sandbox_ids=a,b`: form style, explode false.
    querySerializer: { array: { style: "form", explode: false } },
  });
  const ctx: CallContext = {
    api,
    fetch: fetchImpl,
    timeoutMs,
    retry: { ...options.retryPolicy, retries },
    log: (line) => log(redact(line)),
    setup: serviceSetup(config),
  };
  return {
    config,
    ...sandboxMethods(ctx),
    ...sandboxListMethods(ctx),
    ...metricsMethods(ctx),
    ...snapshotMethods(ctx),
    ...forkMethods(ctx),
    ...templateMethods(ctx),
    ...templateUploadMethods(ctx),
    ...buildMethods(ctx),
    ...tagMethods(ctx),
    ...volumeMethods(ctx),
    ...secretMethods(ctx),
  };
}
