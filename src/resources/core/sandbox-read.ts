/**
 * Reading one sandbox (and optionally its latest metric sample) into its
 * fields. Shared by the `sandbox` data source and the `SandboxReader` resource.
 *
 * @module
 */
import { createControlClient, type ListedSandbox, type SandboxDetail } from "../../client/control";
import { SandboxIacError } from "../../errors";
import type { ResourceContext } from "./lifecycle";
import { unlessNotFound } from "./not-found";
import type {
  ListedSandboxFields,
  SandboxFields,
  SandboxMetricSample,
  SandboxQuery,
} from "./sandbox-fields";

/** The fields of one sandbox both a listing and a read return, besides its ID. */
type SandboxCommonFields = Omit<ListedSandboxFields, "sandboxID">;

/** The fields `sandbox` shares with a listed one: absent lists and maps as empty. */
export function sandboxCommonFieldsOf(sandbox: ListedSandbox | SandboxDetail): SandboxCommonFields {
  const fields: SandboxCommonFields = {
    templateID: sandbox.templateID,
    clientID: sandbox.clientID,
    startedAt: sandbox.startedAt,
    endAt: sandbox.endAt,
    envdVersion: sandbox.envdVersion,
    cpuCount: sandbox.cpuCount,
    memoryMB: sandbox.memoryMB,
    diskSizeMB: sandbox.diskSizeMB,
    state: sandbox.state,
    metadata: sandbox.metadata ?? {},
    volumeMounts: (sandbox.volumeMounts ?? []).map(({ name, path }) => ({ name, path })),
  };
  if (sandbox.alias !== undefined) fields.alias = sandbox.alias;
  return fields;
}

/** The fields of `sandbox` as outputs: no token as empty, no domain as null. */
function sandboxFieldsOf(sandbox: SandboxDetail): SandboxFields {
  return {
    ...sandboxCommonFieldsOf(sandbox),
    envdAccessToken: sandbox.envdAccessToken ?? "",
    domain: sandbox.domain ?? null,
  };
}

/** The newest metric sample of `sandboxID`, `undefined` when there is none. */
async function latestMetrics(
  sandboxID: string,
  ctx: ResourceContext,
): Promise<SandboxMetricSample | undefined> {
  const client = createControlClient({ config: ctx.config });
  const samples = await client.getSandboxMetrics(sandboxID, {}, { signal: ctx.signal });
  // The newest sample; the service returns them oldest first, but do not rely on it.
  const latest = [...samples].sort((a, b) => b.timestampUnix - a.timestampUnix)[0];
  if (!latest) return undefined;
  const { timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, diskUsed, diskTotal } = latest;
  return { timestampUnix, cpuCount, cpuUsedPct, memUsed, memTotal, diskUsed, diskTotal };
}

/** Reads the sandbox; `undefined` when it does not exist. */
export async function findSandbox(
  args: SandboxQuery,
  ctx: ResourceContext,
): Promise<SandboxFields | undefined> {
  const client = createControlClient({ config: ctx.config });
  const sandbox = await unlessNotFound(
    client.getSandbox(args.sandboxID, { signal: ctx.signal }),
    undefined,
  );
  if (!sandbox) return undefined;
  const fields = sandboxFieldsOf(sandbox);
  if (args.includeMetrics) {
    const metrics = await latestMetrics(args.sandboxID, ctx);
    if (metrics) fields.metrics = metrics;
  }
  return fields;
}

/** The `not_found` error of a sandbox that is not there. */
export function sandboxMissing(sandboxID: string): SandboxIacError {
  return new SandboxIacError(
    "not_found",
    `sandbox ${JSON.stringify(sandboxID)} does not exist (or belongs to another team): check sandboxID, and that the sandbox is still running or paused`,
    { operation: "sandboxes.get", resourceId: sandboxID },
  );
}
