/**
 * What a fork takes over from its parent: one table with an entry for every
 * field of the create request, so a field added to {@link CreateSandboxInput}
 * does not compile until it is decided here. A fork must never be a way out
 * of its parent's policy (its network rules, its token requirements, its
 * lifecycle): E2B's fork is the same sandbox, twice.
 *
 * Decided elsewhere, and the fork's own:
 * - `template`: the checkpoint of the parent (its files, and through the
 *   snapshot its template's CPU, memory, user, workdir and start command);
 * - `timeoutSec`: the fork request's `timeout` (E2B's API);
 * - its id, and so its `envdAccessToken` (when secure) and its
 *   `trafficAccessToken` (when `allowPublicTraffic` is false), derived from
 *   the id: the parent's tokens never open a fork, nor a fork's the parent.
 *
 * @module
 */
import type { CreateSandboxInput } from "./create-input";
import type { SandboxRecord } from "./record";

/** Environment variables create sets per sandbox, never inherited by a fork. */
const OWN_ENV_KEYS = new Set(["E2B_SANDBOX", "E2B_SANDBOX_ID", "E2B_TEMPLATE_ID"]);

/** The create-request fields a fork does not take from its parent. */
type ForkOwnField = "template" | "timeoutSec";

/** For each inherited field, how the fork's value is read off the parent's record. */
type ForkInheritance = {
  [K in Exclude<keyof CreateSandboxInput, ForkOwnField>]-?: (
    parent: SandboxRecord,
  ) => CreateSandboxInput[K];
};

/** Every field a fork carries from its parent (copies: the two records never share a list). */
export const FORK_INHERITS: ForkInheritance = {
  // Envd asks for the fork's own access token.
  secure: (p) => p.secure,
  allowInternetAccess: (p) => p.allowInternetAccess,
  // allowOut, denyOut and allowPublicTraffic: the same egress chain, and the
  // proxy asks for the fork's own traffic token.
  network: (p) =>
    p.network && {
      ...p.network,
      ...(p.network.allowOut ? { allowOut: [...p.network.allowOut] } : {}),
      ...(p.network.denyOut ? { denyOut: [...p.network.denyOut] } : {}),
    },
  // What happens at the end of its lifetime, and on a request while paused.
  autoPause: (p) => p.autoPause,
  autoPauseMemory: (p) => p.autoPauseMemory,
  autoResume: (p) => p.autoResume,
  metadata: (p) => ({ ...p.metadata }),
  // The E2B_* variables name the sandbox itself; create sets the fork's own.
  envVars: (p) =>
    Object.fromEntries(Object.entries(p.initEnv).filter(([k]) => !OWN_ENV_KEYS.has(k))),
  // The parent's files include what it sees of its volumes, at the same paths.
  volumeMounts: (p) => p.volumeMounts?.map((mount) => ({ ...mount })),
};

/** The create request of a fork of `parent` from its checkpoint `templateID`. */
export function forkInput(
  parent: SandboxRecord,
  templateID: string,
  timeoutSec: number,
): CreateSandboxInput {
  const inherited = Object.fromEntries(
    Object.entries(FORK_INHERITS).map(([field, carry]) => [field, carry(parent)]),
  ) as { [K in keyof ForkInheritance]: ReturnType<ForkInheritance[K]> };
  return { ...inherited, template: templateID, timeoutSec };
}
