/**
 * The sandbox a provisioning run works in: one it creates from a template, or
 * an existing one. A created sandbox is killed once the run is done unless
 * kept, and always when the run fails (`withSession`).
 *
 * @module
 */
import { createControlClient, type ControlClient } from "../../client/control";
import { createSandboxClient, type SandboxClient } from "../../client/sandbox";
import { SandboxIacError } from "../../errors";
import { unlessNotFound } from "../core/not-found";
import { refTarget } from "../core/refs";
import type { ResourceContext } from "../core/lifecycle";
import { sandboxNetworkOf } from "./network";
import type { ProvisionerArgs } from "./provisioner.args";

/** Default lifetime of a sandbox created for provisioning, in seconds. */
const DEFAULT_SANDBOX_TIMEOUT_SECONDS = 3600;

/** An open working sandbox. */
export interface WorkSession {
  readonly sandboxID: string;
  /** True when this run created the sandbox (and so may kill it). */
  readonly created: boolean;
  readonly control: ControlClient;
  readonly sandbox: SandboxClient;
  /** Kills a sandbox this run created. */
  discard(): Promise<void>;
}

/** Creates the control client of a run from the context's configuration. */
export function controlFor(ctx: ResourceContext): ControlClient {
  return createControlClient({ config: ctx.config, log: ctx.log });
}

/** Creates a sandbox from `template` for the run. */
async function createWorkSandbox(
  ctx: ResourceContext,
  options: {
    template: string;
    timeoutSeconds?: number | undefined;
    envs?: Record<string, string> | undefined;
    metadata?: Record<string, string> | undefined;
    volumeMounts?: Array<{ name: string; path: string }> | undefined;
    network?: ProvisionerArgs["network"];
  },
): Promise<WorkSession> {
  const control = controlFor(ctx);
  // Not under ctx.signal (core/stop.ts): a stop mid-request would leave a sandbox we
  // never learn the ID of; once it is known, the stop kills it.
  const created = await control.createSandbox({
    templateID: options.template,
    timeout: options.timeoutSeconds ?? DEFAULT_SANDBOX_TIMEOUT_SECONDS,
    secure: true,
    metadata: options.metadata ?? { "sandbox-iac": "provisioner" },
    ...(options.envs ? { envVars: options.envs } : {}),
    ...(options.volumeMounts?.length ? { volumeMounts: options.volumeMounts } : {}),
    // Converted to E2B's shape here, once, for every adapter (network.ts).
    ...(options.network ? { network: sandboxNetworkOf(options.network) } : {}),
  });
  ctx.log(`created sandbox ${created.sandboxID} from template ${options.template}`);
  return session(ctx, control, created.sandboxID, created.envdAccessToken ?? undefined, true);
}

/** Opens an existing sandbox; fails with `not_found` when it is gone. */
export async function openWorkSandbox(
  ctx: ResourceContext,
  sandboxID: string,
): Promise<WorkSession> {
  const control = controlFor(ctx);
  const detail = await control.getSandbox(sandboxID, { signal: ctx.signal });
  if (detail.state !== "running") {
    throw new SandboxIacError(
      "conflict",
      `sandbox ${sandboxID} is ${detail.state}, provisioning needs it running: resume it (connect) or provision from a template instead`,
      { operation: "provisioner.open", resourceId: sandboxID },
    );
  }
  // The service answers with the sandbox ID envd routing takes, also when
  // the user gave the legacy `<sandboxID>-<clientID>` the control API accepts.
  return session(ctx, control, detail.sandboxID, detail.envdAccessToken ?? undefined, false);
}

function session(
  ctx: ResourceContext,
  control: ControlClient,
  sandboxID: string,
  accessToken: string | undefined,
  created: boolean,
): WorkSession {
  const sandbox = createSandboxClient({ sandboxID, accessToken, config: ctx.config });
  return {
    sandboxID,
    created,
    control,
    sandbox,
    async discard() {
      if (!created) return;
      await killQuietly(control, sandboxID);
      ctx.log(`killed sandbox ${sandboxID}`);
    },
  };
}

/** Kills a sandbox; one that is already gone counts as killed. */
export async function killQuietly(control: ControlClient, sandboxID: string): Promise<void> {
  await unlessNotFound(control.killSandbox(sandboxID), undefined);
}

/** Opens the sandbox of a run: the declared one, or a new one from the template. */
async function openFor(args: ProvisionerArgs, ctx: ResourceContext): Promise<WorkSession> {
  if (args.sandboxID !== undefined) return openWorkSandbox(ctx, args.sandboxID);
  return createWorkSandbox(ctx, {
    // A Template's `ref` names the build it follows; the sandbox starts from the template.
    template: refTarget(args.template),
    timeoutSeconds: args.sandboxTimeoutSeconds,
    envs: args.envs,
    metadata: args.metadata,
    volumeMounts: args.volumeMounts,
    network: args.network,
  });
}

/** Runs `fn` in a fresh session; a created sandbox is killed unless kept, and always on failure. */
export async function withSession<T>(
  args: ProvisionerArgs,
  ctx: ResourceContext,
  fn: (session: WorkSession) => Promise<T>,
): Promise<{ result: T; keptSandboxID?: string }> {
  const session = await openFor(args, ctx);
  try {
    const result = await fn(session);
    if (session.created && args.keepSandbox) return { result, keptSandboxID: session.sandboxID };
    await session.discard();
    return { result };
  } catch (err) {
    // keepSandbox keeps a failed run's sandbox to debug, unless the user stopped the run.
    if (session.created && args.keepSandbox && !ctx.signal?.aborted) {
      throw keptForInspection(err, session.sandboxID, ctx);
    }
    // All or nothing: a failed run leaves no sandbox of its own behind.
    await session
      .discard()
      .catch((cleanup: unknown) =>
        ctx.log(`could not kill sandbox ${session.sandboxID}: ${String(cleanup)}`),
      );
    throw err;
  }
}

/**
 * The failure of a run whose sandbox is kept (keepSandbox): the same error,
 * plus the sandbox's ID and how to look inside. Nothing is stored (a failed
 * create records no state), so the next apply provisions a new sandbox.
 */
function keptForInspection(err: unknown, sandboxID: string, ctx: ResourceContext): SandboxIacError {
  const failure = SandboxIacError.from(err, { operation: "provisioner.run" });
  const how =
    `sandbox ${sandboxID} was kept for inspection (keepSandbox): look inside with ` +
    `\`e2b sandbox connect ${sandboxID}\` (or Sandbox.connect("${sandboxID}") in the SDK), ` +
    `kill it with \`e2b sandbox kill ${sandboxID}\` when done; it is not recorded, so the next apply provisions a new sandbox`;
  ctx.log(how);
  return new SandboxIacError(failure.code, `${failure.reason}\n${how}`, {
    operation: failure.operation,
    resourceId: failure.resourceId ?? sandboxID,
    status: failure.status,
    rpcCode: failure.rpcCode,
    cause: err,
  });
}
