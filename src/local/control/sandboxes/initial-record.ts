/**
 * The record of a sandbox being created, from its template and the create
 * request.
 *
 * @module
 */
import type { ResolvedTemplate } from "../templates/lookup";
import type { CreateSandboxInput } from "./create-input";
import { newClientID } from "./ids";
import type { SandboxRecord } from "./record";

/** A `running` record for `sandboxID`, started at `now` (ms), with no logs yet. */
export function newSandboxRecord(
  sandboxID: string,
  template: ResolvedTemplate,
  input: CreateSandboxInput,
  now: number,
): SandboxRecord {
  return {
    sandboxID,
    templateID: template.templateID,
    buildID: template.buildID,
    alias: template.alias,
    clientID: newClientID(),
    startedAt: new Date(now).toISOString(),
    endAt: new Date(now + input.timeoutSec * 1000).toISOString(),
    state: "running",
    cpuCount: template.cpuCount,
    memoryMB: template.memoryMB,
    diskSizeMB: template.diskSizeMB,
    envdVersion: template.envdVersion,
    secure: input.secure,
    allowInternetAccess: input.allowInternetAccess,
    ...(input.network ? { network: input.network } : {}),
    autoPause: input.autoPause,
    ...(input.autoPauseMemory === false ? { autoPauseMemory: false } : {}),
    autoResume: input.autoResume,
    metadata: input.metadata,
    initEnv: {
      ...template.envs,
      ...input.envVars,
      E2B_SANDBOX: "true",
      E2B_SANDBOX_ID: sandboxID,
      E2B_TEMPLATE_ID: template.templateID,
    },
    layers: template.layers,
    defaultUser: template.defaultUser,
    defaultWorkdir: template.defaultWorkdir,
    startCmd: template.startCmd,
    ...(input.volumeMounts?.length ? { volumeMounts: input.volumeMounts } : {}),
    logs: [],
  };
}
