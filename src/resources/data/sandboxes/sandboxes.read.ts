/**
 * Listing sandboxes with filters (every page of `GET /v2/sandboxes`).
 *
 * @module
 */
import { createControlClient } from "../../../client/control";
import type { ResourceContext } from "../../core/lifecycle";
import { sandboxCommonFieldsOf } from "../../core/sandbox-read";
import type { ListedSandboxFields, SandboxesDataArgs, SandboxesDataResult } from "./sandboxes.args";

/** The `sandboxes` data source's query: every sandbox matching the filters. */
export async function readSandboxes(
  args: SandboxesDataArgs,
  ctx: ResourceContext,
): Promise<SandboxesDataResult> {
  const client = createControlClient({ config: ctx.config });
  const sandboxes: ListedSandboxFields[] = [];
  const query = { metadata: args.metadata, state: args.state };
  for await (const sandbox of client.listSandboxesV2(query, { signal: ctx.signal }))
    sandboxes.push({ sandboxID: sandbox.sandboxID, ...sandboxCommonFieldsOf(sandbox) });
  return { sandboxes };
}
