/**
 * A warm-pool member's `/init` sent during its warm-up rather than at its
 * claim: the one agent round trip on a warm create's path.
 *
 * Each warm key remembers how its last create initialised its sandbox (a
 * recipe: the id goes in `E2B_SANDBOX_ID` and the token), and a member's
 * warm-up sends that `/init` for the member's own id. A claim compares what
 * its create would send with what the member got: the same settings skip the
 * `/init`; any difference sends it as before (proving the token the member
 * holds), so a command sees exactly the variables, user, workdir and token
 * it saw before.
 *
 * Only creates without variables of their own are remembered: a create's
 * variables (often secrets) never reach another sandbox's agent. A key's
 * recipe therefore holds only its template's settings, and no other
 * template's sandbox gets a member that was sent them: templates of the same
 * layers (one with ENV steps alone, say) share a key, and an agent keeps what
 * it was sent in its memory, where root code in the sandbox can read it,
 * after a later `/init` replaced it. A create of another template does not
 * take such a member ({@link PreInits.sentForOther}), and a key that served
 * two templates gets no recipe again.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import { initAgent, type AgentInit } from "../agent-client";
import { EDGE_TRUST_ENV } from "../../../wire/sandbox-paths";
import type { SandboxRecord } from "./record";
import { warmKey, type WarmSpec } from "./warm-pool";

/** Everything a sandbox's `/init` sets in its agent. */
export interface InitSettings {
  init: AgentInit;
  /** The token the agent enforces from then on; undefined for a sandbox that is not secure. */
  accessToken: string | undefined;
}

/** A member's warm-up `/init`: what it sent, and whether the agent answered it. */
export interface SentInit {
  settings: InitSettings;
  /** False when the `/init` failed: the agent may hold any part of it (its token too). */
  confirmed: boolean;
}

/** How `/init` initialises the sandbox of a member whose id is given. */
export type InitRecipe = (sandboxID: string) => InitSettings;

/** A key's recipe and the template whose create it came from. */
interface KeyRecipe {
  templateID: string;
  recipe: InitRecipe;
}

/** Recipes kept at most (one per warm key in use; the pool keeps few keys). */
const MAX_RECIPES = 16;

/** The `/init` of `record`'s sandbox: its variables after the egress CA's, its default user and workdir. */
export function initSettingsOf(
  record: SandboxRecord,
  accessToken: string | undefined,
): InitSettings {
  return {
    init: {
      // The sandbox's own variables win over the egress CA's (EDGE_TRUST_ENV).
      envVars: { ...EDGE_TRUST_ENV, ...record.initEnv },
      defaultUser: record.defaultUser,
      defaultWorkdir: record.defaultWorkdir,
    },
    accessToken,
  };
}

/** True when `a` and `b` leave the agent in the same state (variables in the same order too). */
export function sameInit(a: InitSettings, b: InitSettings): boolean {
  return (
    a.accessToken === b.accessToken &&
    a.init.defaultUser === b.init.defaultUser &&
    a.init.defaultWorkdir === b.init.defaultWorkdir &&
    JSON.stringify(Object.entries(a.init.envVars)) ===
      JSON.stringify(Object.entries(b.init.envVars))
  );
}

/** The recipes of the warm keys and the `/init` each member was sent. */
export class PreInits {
  /** Insertion order is recency. */
  private readonly recipes = new Map<string, KeyRecipe>();
  /** Per key, the one template whose creates used it, or null once two did (insertion order is recency). */
  private readonly templates = new Map<string, string | null>();
  /** Per member, the template whose settings its warm-up `/init` carried. */
  private readonly sentTemplate = new WeakMap<RuntimeSandbox, string>();
  /** Per member, its warm-up's `/init`, settled once answered or failed. */
  private readonly sent = new WeakMap<RuntimeSandbox, Promise<SentInit>>();
  /** Members a create took: no warm-up `/init` is sent to them any more. */
  private readonly taken = new WeakSet<RuntimeSandbox>();

  /**
   * A create of template `templateID` with `spec`'s key initialised its
   * sandbox by `recipe`; undefined when it had variables of its own (members
   * of the key then get none). A key two templates used gets none again.
   */
  remember(spec: WarmSpec, templateID: string, recipe: InitRecipe | undefined): void {
    const key = warmKey(spec);
    this.recipes.delete(key);
    const seen = this.templates.get(key);
    this.templates.delete(key);
    const shared = seen === null || (seen !== undefined && seen !== templateID);
    this.templates.set(key, shared ? null : templateID);
    if (this.templates.size > MAX_RECIPES)
      this.templates.delete(this.templates.keys().next().value!);
    if (!recipe || shared) return;
    this.recipes.set(key, { templateID, recipe });
    if (this.recipes.size > MAX_RECIPES) this.recipes.delete(this.recipes.keys().next().value!);
  }

  /**
   * True when `processes`' warm-up `/init` carried another template's
   * settings than `templateID`'s: its agent holds them, so a create of
   * `templateID` must not take it.
   */
  sentForOther(processes: RuntimeSandbox, templateID: string): boolean {
    const sent = this.sentTemplate.get(processes);
    return sent !== undefined && sent !== templateID;
  }

  /**
   * Sends the key's `/init` to a member not yet taken (its warm-up); without
   * a recipe, one that leaves the agent's boot settings as they are (no
   * variables, no token), so that its `/init` path is warm for the claim's.
   */
  async send(processes: RuntimeSandbox, spec: WarmSpec): Promise<void> {
    if (this.taken.has(processes)) return;
    const known = this.recipes.get(warmKey(spec));
    const settings: InitSettings = known
      ? known.recipe(processes.sandboxID)
      : { init: { envVars: {} }, accessToken: undefined };
    if (known) this.sentTemplate.set(processes, known.templateID);
    const sending = initAgent(processes, settings.init, { accessToken: settings.accessToken });
    // A create taking the member meanwhile sends its own /init only after this one: two
    // /init in flight at once could land in either order.
    this.sent.set(
      processes,
      sending.then(
        () => ({ settings, confirmed: true }),
        () => ({ settings, confirmed: false }),
      ),
    );
    await sending;
  }

  /**
   * A create took `processes`: its warm-up's `/init` once settled, undefined
   * when none was sent. No warm-up `/init` is sent from now on.
   */
  take(processes: RuntimeSandbox): Promise<SentInit> | undefined {
    this.taken.add(processes);
    return this.sent.get(processes);
  }
}
