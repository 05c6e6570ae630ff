/**
 * The `SandboxReader` resource's data: its inputs (the query of one sandbox,
 * as the `sandbox` data source takes it), its outputs (the sandbox's fields),
 * and how each behaves on a change.
 *
 * @module
 */
import type { z } from "zod";
import type { OutputRule } from "../core/descriptor";
import type { ChangeRule } from "../core/lifecycle";
import {
  sandboxFieldsSchema,
  sandboxQuerySchema,
  type SandboxFields,
} from "../core/sandbox-fields";

/** The zod schema of the SandboxReader inputs: `sandboxID` and `includeMetrics`. */
export const sandboxReaderArgsSchema = sandboxQuerySchema;

/** SandboxReader inputs (as given; check changes nothing). */
export type SandboxReaderInputs = z.infer<typeof sandboxReaderArgsSchema>;
/** SandboxReader inputs as a user writes them. */
export type SandboxReaderArgs = SandboxReaderInputs;

/** The outputs besides the inputs: every field of the sandbox. */
export const sandboxReaderOutputsSchema = sandboxFieldsSchema;

/** Outputs: every field of the sandbox (`GET /sandboxes/{id}`) plus every input. */
export type SandboxReaderOutputs = SandboxReaderInputs & SandboxFields;

/** Outputs that are secrets (adapters mark them so). */
export const sandboxReaderSecretOutputs = ["envdAccessToken"] as const;

/** Another sandbox is another resource; metrics only change what is read. */
export const sandboxReaderChangeRules: Record<keyof SandboxReaderInputs, ChangeRule> = {
  sandboxID: "replace",
  includeMetrics: "update",
};

/** What a sandbox was created with stays; what it is doing now is read again by an update. */
export const sandboxReaderOutputRules: Record<keyof SandboxFields, OutputRule> = {
  templateID: "stable",
  alias: "stable",
  clientID: "stable",
  startedAt: "stable",
  envdVersion: "stable",
  cpuCount: "stable",
  memoryMB: "stable",
  diskSizeMB: "stable",
  domain: "stable",
  endAt: "recomputed",
  state: "recomputed",
  metadata: "recomputed",
  envdAccessToken: "recomputed",
  volumeMounts: "recomputed",
  metrics: "recomputed",
};
