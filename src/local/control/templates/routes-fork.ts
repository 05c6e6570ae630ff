/**
 * `POST /sandboxes/{sandboxID}/fork`: checkpoints a sandbox's filesystem and
 * starts `count` sandboxes from it, one result per fork (docs/control-api.md#sandbox-endpoints).
 *
 * The runtime copies files, not memory: the parent's processes are frozen for
 * the copy and go on afterwards, and each fork boots fresh on the parent's
 * files (its processes do not come along). The checkpoint is an unnamed
 * snapshot of the parent, listed and deleted like any other.
 *
 * @module
 */
import { z } from "zod";
import { SandboxIacError } from "../../../errors";
import { failureAnswer, serviceError, parseWith, type ControlRequest, type Route } from "../http";
import { int32 } from "../../../wire/control-requests";
import type { TemplateRouteDeps } from "./route-deps";
import { internalsOf } from "./registry";
import { captureSnapshot } from "./routes-snapshots";
import { snapshotId } from "./views";

/** E2B's fork lifetime when none is given, in seconds. */
const DEFAULT_FORK_TIMEOUT_SEC = 15;

/** The fork body; every field is optional, as is the body itself. */
const ForkRequest = z.object({
  timeout: int32.optional(),
  count: z.number().int().min(1).max(100).optional(),
});

/** The fork route. */
export function forkRoutes(deps: TemplateRouteDeps): Route[] {
  const { catalog } = internalsOf(deps.registry);

  const fork = async (req: ControlRequest) => {
    const sandboxID = req.params.sandboxID ?? "";
    const body = parseWith(ForkRequest, (await req.json()) ?? {}, "body");
    const timeout = body.timeout ?? DEFAULT_FORK_TIMEOUT_SEC;
    if (timeout <= 0) {
      throw serviceError(
        "invalid_argument",
        `body.timeout: Timeout must be greater than 0, got ${timeout}: pass each fork's lifetime in seconds`,
      );
    }
    if (!deps.sandboxes.exists(sandboxID)) {
      throw serviceError(
        "not_found",
        `Sandbox "${sandboxID}" doesn't exist or you don't have access to it`,
      );
    }
    const checkpoint = await captureSnapshot(deps, catalog, sandboxID, undefined);
    const templateID = snapshotId(checkpoint);
    const results: object[] = [];
    // One at a time: each start is a namespace, overlay and agent boot.
    for (let i = 0; i < (body.count ?? 1); i++) {
      try {
        results.push({ sandbox: await deps.sandboxes.createFork(sandboxID, templateID, timeout) });
      } catch (err) {
        const { status, message } = failureAnswer(
          SandboxIacError.from(err, { operation: "sandboxes.fork", resourceId: sandboxID }),
        );
        results.push({ error: { code: status, message } });
      }
    }
    return { status: 201, body: results };
  };

  return [{ method: "POST", pattern: "/sandboxes/:sandboxID/fork", handler: fork }];
}
