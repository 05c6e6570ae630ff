/**
 * Plain async functions for Pulumi programs that read sandboxes (like data
 * sources). They run in the program process, at preview too, and use the
 * stack config `sandbox-iac:*`, then the `E2B_*` environment variables.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  ListedSandbox,
  SandboxDetail,
  SandboxMetric,
  SandboxState,
} from "../client/control/types";
import { CONFIG_KEYS } from "./constants";
import { configFromSettings, type ProviderSettings } from "./settings";
import { controlClientFor } from "./control";

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

/** `GET /sandboxes/{sandboxID}`: a running or paused sandbox; fails with `not_found` when there is none. */
export async function getSandbox(
  sandboxID: string,
  options?: FunctionOptions,
): Promise<SandboxDetail> {
  return controlClientFor(configFromSettings(settings(options))).getSandbox(sandboxID);
}

/** Filters of {@link listSandboxes}. */
export interface ListSandboxesQuery {
  /** Only sandboxes in these states. @default running and paused */
  state?: SandboxState[];
  /** Only sandboxes whose metadata holds every one of these pairs. @default no filter */
  metadata?: Record<string, string>;
}

/** Every sandbox matching `query` (all pages of `GET /v2/sandboxes`). */
export async function listSandboxes(
  query: ListSandboxesQuery = {},
  options?: FunctionOptions,
): Promise<ListedSandbox[]> {
  const client = controlClientFor(configFromSettings(settings(options)));
  const all: ListedSandbox[] = [];
  for await (const sandbox of client.listSandboxesV2(query)) all.push(sandbox);
  return all;
}

/** The metric samples of a sandbox between `start` and `end` (unix seconds). @default the service's default range */
export async function getSandboxMetrics(
  sandboxID: string,
  range: { start?: number; end?: number } = {},
  options?: FunctionOptions,
): Promise<SandboxMetric[]> {
  return controlClientFor(configFromSettings(settings(options))).getSandboxMetrics(
    sandboxID,
    range,
  );
}
