/**
 * Listing sandboxes with filters (every page of `GET /v2/sandboxes`).
 *
 * @module
 */
import { createControlClient, type ListedSandbox } from "../../../client/control";
import type { ResourceContext } from "../../core/lifecycle";
import type { ListedSandboxFields, SandboxesDataArgs, SandboxesDataResult } from "./sandboxes.args";

function fieldsOf(sandbox: ListedSandbox): ListedSandboxFields {
  const fields: ListedSandboxFields = {
    sandboxID: sandbox.sandboxID,
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

/** The `sandboxes` data source's query: every sandbox matching the filters. */
export async function readSandboxes(
  args: SandboxesDataArgs,
  ctx: ResourceContext,
): Promise<SandboxesDataResult> {
  const client = createControlClient({ config: ctx.config });
  const sandboxes: ListedSandboxFields[] = [];
  const query = { metadata: args.metadata, state: args.state };
  for await (const sandbox of client.listSandboxesV2(query, { signal: ctx.signal }))
    sandboxes.push(fieldsOf(sandbox));
  return { sandboxes };
}
