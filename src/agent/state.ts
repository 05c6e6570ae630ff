/**
 * Mutable settings of the agent, replaced as a whole by every `POST /init`.
 *
 * @module
 */
import { BOOT_DEFAULT_USER } from "./constants";

/** What `/init` configures. */
interface AgentSettings {
  /** The access token; once set, requests must carry it. @default undefined (no check) */
  accessToken: string | undefined;
  /** Variables added to every process after PATH/HOME and before request variables. */
  envVars: Record<string, string>;
  /** The user requests act as when they name none. @default "root" until /init sets one */
  defaultUser: string;
  /** The directory an empty path or cwd means. @default undefined (the user's HOME) */
  defaultWorkdir: string | undefined;
}

/** The agent's settings, shared by every handler. */
export interface AgentState {
  settings: AgentSettings;
}

/** Creates the boot state: no token, no variables, `root` as default user. */
export function createAgentState(): AgentState {
  return {
    settings: {
      accessToken: undefined,
      envVars: {},
      defaultUser: BOOT_DEFAULT_USER,
      defaultWorkdir: undefined,
    },
  };
}

/** The global variables every process and `GET /envs` see, `/init` values last. */
export function globalEnv(state: AgentState): Record<string, string> {
  return { E2B_SANDBOX: "true", ...state.settings.envVars };
}
