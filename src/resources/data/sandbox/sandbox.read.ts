/**
 * The `sandbox` data source's query.
 *
 * @module
 */
import type { ResourceContext } from "../../core/lifecycle";
import { findSandbox, sandboxMissing } from "../../core/sandbox-read";
import type { SandboxDataArgs, SandboxFields } from "./sandbox.args";

/** The `sandbox` data source's query: the sandbox's fields; `not_found` when it does not exist. */
export async function readSandbox(
  args: SandboxDataArgs,
  ctx: ResourceContext,
): Promise<SandboxFields> {
  const fields = await findSandbox(args, ctx);
  if (!fields) throw sandboxMissing(args.sandboxID);
  return fields;
}
