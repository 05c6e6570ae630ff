/**
 * Stop means stop: what happens to the work in flight on the service when an
 * operation is stopped (`ResourceContext.signal` fires: Terraform's
 * StopProvider on Ctrl-C, the Pulumi plugin told to shut down). The rule,
 * written once here and applied by every resource:
 *
 * - a template build in flight is cancelled on the service, whether it is
 *   building or still waiting for its COPY files (stopped mid-upload);
 * - a setup command in flight is killed in its sandbox;
 * - a sandbox the operation created is killed, also with `keepSandbox` (a
 *   stopped run's sandbox is half-provisioned, and it would be recorded
 *   nowhere);
 * - a snapshot being taken is waited for and kept: the service cannot stop one
 *   half-way, and giving up the wait would leave it on the service but not in
 *   the state;
 * - a call that creates something (a template build, a sandbox) is let finish
 *   (it is short): stopped mid-request, it would leave on the service
 *   something whose ID the provider never learns; once known, the rules above
 *   apply to it.
 *
 * So a resource ends either in the state as it is on the service (a finished
 * snapshot, the prior state of an update) or absent from both (a stopped
 * create records nothing), and the next plan shows what is left to do.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import type { ResourceContext } from "./lifecycle";

/** True when the operation of `ctx` was stopped (its signal fired). */
export function wasStopped(ctx: Pick<ResourceContext, "signal">): boolean {
  return ctx.signal?.aborted === true;
}

/**
 * Throws `canceled` when the operation of `ctx` was stopped: called before
 * starting work the rule says to finish once begun (a snapshot), so a stop
 * that came first starts none.
 */
export function throwIfStopped(
  ctx: Pick<ResourceContext, "signal">,
  operation: string,
  what: string,
): void {
  if (!wasStopped(ctx)) return;
  throw new SandboxIacError("canceled", `stopped before ${what}: nothing was started`, {
    operation,
    cause: ctx.signal?.reason,
  });
}

/**
 * `ctx` without its signal: for the calls that clean up after a stop (cancel
 * a build, kill a sandbox or a command), which must run although the signal
 * has fired, and for the calls the rule says to finish (a snapshot).
 */
export function uncancellable(ctx: ResourceContext): ResourceContext {
  const { signal: _stopped, ...rest } = ctx;
  return rest;
}

/**
 * Runs one clean-up step after a stop, e.g. `stopOnService(ctx, "cancel build
 * b1", () => control.cancelBuild(...))`: it logs what was done, or why it
 * could not be done (the next plan compares); it never throws, so the stop's
 * own error is what the user sees.
 */
export async function stopOnService(
  ctx: Pick<ResourceContext, "log">,
  what: string,
  step: () => Promise<unknown>,
  ifFailed = "it may still be going on in the service; the next plan compares",
): Promise<void> {
  // Said first: a plugin the engine SIGKILLs soon after may never log the outcome.
  ctx.log(`stopping: ${what}`);
  try {
    await step();
    ctx.log(`stopped: ${what}: done`);
  } catch (err) {
    const why = SandboxIacError.from(err, { operation: "stop" }).reason;
    ctx.log(`stopped: could not ${what} (${why}): ${ifFailed}`);
  }
}
