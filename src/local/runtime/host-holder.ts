/**
 * A sandbox's namespace holder through the host spawner: the steps its child
 * takes as host root between the fork and the exec of `sleep`
 * (`become_holder` in host-spawner.c), the field of the `H` request that
 * asks for them, and the error a failed step becomes (holder.ts starts it).
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { CREDENTIAL_STEPS } from "./host-launch";

/** What a holder's child does before its exec, in this order. */
export interface HostHolder {
  /** Named in the error when a step fails. */
  sandboxID: string;
  /** The host uid and gid it drops to before making its namespaces (root inside once mapped). */
  idBase: number;
}

/** The holder's field of an `H` request, after its descriptors (host-spawner.ts has the protocol). */
export function holderFields(holder: HostHolder): string[] {
  return [String(holder.idBase)];
}

/** Each step's name in an `F` event (host-spawner.c's `step_names`), as the error tells it. */
const STEPS: Readonly<Record<string, (holder: HostHolder) => string>> = {
  ...CREDENTIAL_STEPS,
  fds: () => "giving it its descriptors",
  unshare: () =>
    "making its user, mount and network namespaces (check that the host allows user namespaces: sysctl user.max_user_namespaces)",
  propagation: () => "making its mounts slaves of the host's",
  exec: () => "running sleep",
};

/**
 * The error of a holder that did not start: the step that failed and why
 * (`errno`, an errno name or the spawner's own failure). Nothing of it runs on.
 */
export function holderError(
  operation: string,
  holder: HostHolder,
  failure: { errno: string; step?: string | undefined },
): SandboxIacError {
  const step = failure.step
    ? (STEPS[failure.step]?.(holder) ?? `step ${failure.step}`)
    : "starting it";
  return new SandboxIacError(
    "internal",
    `the sandbox's namespace holder failed at ${step}: ${failure.errno}`,
    { operation, resourceId: holder.sandboxID },
  );
}
