/**
 * Plain async functions for Pulumi programs that read sandboxes (like data
 * sources). They run in the program process, at preview too, and use the
 * stack config `sandbox-iac:*`, then the `E2B_*` environment variables.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { ResourceContext } from "../resources/core/lifecycle";
import { queryDataSource } from "../resources/core/query";
import { sandboxDataSource, type SandboxFields } from "../resources/data/sandbox";
import {
  sandboxMetricsDataSource,
  type SandboxMetricsDataResult,
} from "../resources/data/sandbox-metrics";
import { sandboxesDataSource, type ListedSandboxFields } from "../resources/data/sandboxes";
import { CONFIG_KEYS } from "./constants";
import { configFromSettings, type ProviderSettings } from "./settings";

/** Where the functions find the service. */
export type FunctionOptions = ProviderSettings;

function settings(options: FunctionOptions = {}): ProviderSettings {
  // runtime.getConfig reads secrets without the "use getSecret" warning, and nothing is stored.
  const stack = (key: string) => pulumi.runtime.getConfig(key);
  return {
    apiKey: options.apiKey ?? stack(CONFIG_KEYS.apiKey),
    apiUrl: options.apiUrl ?? stack(CONFIG_KEYS.apiUrl),
    sandboxUrl: options.sandboxUrl ?? stack(CONFIG_KEYS.sandboxUrl),
    domain: options.domain ?? stack(CONFIG_KEYS.domain),
  };
}

/** The context the data sources run in: the program process, its directory, its console. */
function context(options: FunctionOptions | undefined): ResourceContext {
  return {
    config: configFromSettings(settings(options)),
    baseDir: process.cwd(),
    log: (line) => console.log(line),
  };
}

/** A sandbox as {@link getSandbox} returns it: its ID and every field of the `sandbox` data source. */
export type SandboxInfo = SandboxFields & { sandboxID: string };

/**
 * A running or paused sandbox (the `sandbox` data source); fails with
 * `not_found` when there is none.
 */
export async function getSandbox(
  sandboxID: string,
  options?: FunctionOptions,
): Promise<SandboxInfo> {
  return {
    sandboxID,
    ...(await queryDataSource(sandboxDataSource, { sandboxID }, context(options))),
  };
}

/** Filters of {@link listSandboxes}. */
export interface ListSandboxesQuery {
  /** Only sandboxes in these states. @default running and paused */
  state?: Array<"running" | "paused">;
  /** Only sandboxes whose metadata holds every one of these pairs. @default no filter */
  metadata?: Record<string, string>;
}

/** Every sandbox matching `query` (the `sandboxes` data source: all pages of `GET /v2/sandboxes`). */
export async function listSandboxes(
  query: ListSandboxesQuery = {},
  options?: FunctionOptions,
): Promise<ListedSandboxFields[]> {
  return (await queryDataSource(sandboxesDataSource, query, context(options))).sandboxes;
}

/** One metric sample, as {@link getSandboxMetrics} returns it. */
export type SandboxMetricInfo = SandboxMetricsDataResult["metrics"][number];

/**
 * The metric samples of a sandbox between `start` and `end` (unix seconds),
 * from the `sandboxMetrics` data source.
 * @default the service's default range (the sandbox's start until now)
 */
export async function getSandboxMetrics(
  sandboxID: string,
  range: { start?: number; end?: number } = {},
  options?: FunctionOptions,
): Promise<SandboxMetricInfo[]> {
  const args = { sandboxID, ...range };
  return (await queryDataSource(sandboxMetricsDataSource, args, context(options))).metrics;
}
