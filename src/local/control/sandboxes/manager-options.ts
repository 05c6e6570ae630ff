/**
 * How the sandbox manager is opened: its data dir, runtime, the template
 * registry it starts sandboxes from, and its limits.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateRegistry } from "../templates/lookup";

/** Options of `SandboxManager.open`. */
export interface SandboxManagerOptions {
  dataDir: string;
  runtime: SandboxRuntime;
  templates: TemplateRegistry;
  /** The secret that derives access tokens. */
  tokenSecret: string;
  log: (line: string) => void;
  /**
   * Sandboxes kept started ahead per (template layers, CPU, memory, network),
   * claimed by create; 0 disables the warm pool. The `base` template is kept
   * warm from the start, other templates once created from.
   * @default 2
   */
  warmPoolSize?: number;
  /**
   * Most sandboxes of the team (the service's API key) running at once,
   * creates and resumes in flight included; past it create, resume and
   * connect answer 429 with E2B's message.
   * @default the runtime's `maxSandboxes`
   */
  maxSandboxesPerKey?: number | undefined;
  /**
   * The domain the service serves sandboxes under (`<port>-<sandboxID>.<domain>`),
   * answered as `domain` by create, connect, resume, fork and get, as E2B's
   * API does, so that the SDKs build the sandbox's URLs from the answer. Read
   * per answer: it is known once the service listens.
   * @default none: `domain` is null (the client's own domain applies)
   */
  domain?: (() => string | undefined) | undefined;
}
