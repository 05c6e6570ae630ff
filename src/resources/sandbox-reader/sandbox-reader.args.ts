/**
 * Inputs of the `SandboxReader` resource: the zod schema, the inferred types,
 * the field docs and the change rules (as data, read by `diffByRules`).
 *
 * @module
 */
import { z } from "zod";
import type { ChangeRule } from "../core/lifecycle";

/** The zod schema of the SandboxReader inputs. */
export const sandboxReaderArgsSchema = z.strictObject({
  /** The sandbox to read. */
  sandboxID: z.string({ error: "must be a sandbox ID string" }).regex(/^[a-z0-9]+(-[a-z0-9]+)?$/, {
    error: 'must be a sandbox ID like "i1a2b3c4d5e6f7g8h9i0j"',
  }),
  /** Also read the latest resource metrics. @default false: no `metrics` output */
  includeMetrics: z.boolean({ error: "must be true or false" }).optional(),
});

/** SandboxReader inputs after `check`. */
export type SandboxReaderInputs = z.output<typeof sandboxReaderArgsSchema>;
/** SandboxReader inputs as a user writes them. */
export type SandboxReaderArgs = z.input<typeof sandboxReaderArgsSchema>;

/** The latest metric sample of a sandbox. */
export interface SandboxReaderMetrics {
  timestampUnix: number;
  cpuCount: number;
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  diskUsed: number;
  diskTotal: number;
}

/** Outputs: every field of the sandbox (`GET /sandboxes/{id}`) plus every input. */
export interface SandboxReaderOutputs extends SandboxReaderInputs {
  templateID: string;
  alias?: string;
  clientID: string;
  startedAt: string;
  endAt: string;
  envdVersion: string;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  state: string;
  metadata: Record<string, string>;
  /** Token of the sandbox interface; a secret output. Empty for a sandbox without one. */
  envdAccessToken: string;
  domain: string | null;
  volumeMounts: Array<{ name: string; path: string }>;
  /** The latest metric sample, when `includeMetrics` is set and one exists. */
  metrics?: SandboxReaderMetrics;
}

/** Outputs that are secrets (adapters mark them so). */
export const sandboxReaderSecretOutputs = ["envdAccessToken"] as const;

/** Another sandbox is another resource; metrics only change what is read. */
export const sandboxReaderChangeRules: Record<keyof SandboxReaderInputs, ChangeRule> = {
  sandboxID: "replace",
  includeMetrics: "update",
};
