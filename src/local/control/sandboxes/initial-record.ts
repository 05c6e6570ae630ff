/**
 * The record of a sandbox being created, from its template and the create
 * request.
 *
 * @module
 */
import type { CreateSandboxInput, ResolvedTemplate } from "./manager-options";
import { newClientID } from "./ids";
import type { SandboxRecord } from "./record";

/** A `running` record for `sandboxID`, started at `now` (ms), with no logs yet. */
export function newSandboxRecord(
  sandboxID: string,
  tpl: ResolvedTemplate,
  input: CreateSandboxInput,
  now: number,
): SandboxRecord {
  return {
    sandboxID,
    templateID: tpl.templateID,
    buildID: tpl.buildID,
    alias: tpl.alias,
    clientID: newClientID(),
    startedAt: new Date(now).toISOString(),
    endAt: new Date(now + input.timeoutSec * 1000).toISOString(),
    state: "running",
    cpuCount: tpl.cpuCount,
    memoryMB: tpl.memoryMB,
    diskSizeMB: tpl.diskSizeMB,
    envdVersion: tpl.envdVersion,
    secure: input.secure,
    allowInternetAccess: input.allowInternetAccess,
    ...(input.network ? { network: input.network } : {}),
    autoPause: input.autoPause,
    ...(input.autoPauseMemory === false ? { autoPauseMemory: false } : {}),
    autoResume: input.autoResume,
    metadata: input.metadata,
    initEnv: {
      ...tpl.envs,
      ...input.envVars,
      E2B_SANDBOX: "true",
      E2B_SANDBOX_ID: sandboxID,
      E2B_TEMPLATE_ID: tpl.templateID,
    },
    layers: tpl.layers,
    defaultUser: tpl.defaultUser,
    defaultWorkdir: tpl.defaultWorkdir,
    startCmd: tpl.startCmd,
    ...(input.volumeMounts?.length ? { volumeMounts: input.volumeMounts } : {}),
    logs: [],
  };
}
