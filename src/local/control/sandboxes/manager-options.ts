/**
 * The interfaces around the sandbox manager: what it offers the templates
 * side, what it needs of the template registry, and how it is opened.
 *
 * @module
 */
import type { ResolvedVolumeMount } from "../volumes/mounts";
import type { SandboxNetwork } from "./record";
import type { SandboxRuntime } from "../../runtime/types";

/** What the templates side may ask of the sandboxes side. */
export interface SandboxManagerView {
  /** True when the sandbox is running or paused. */
  exists(sandboxID: string): boolean;
  /**
   * Pauses its processes (if running) around `fn`; `fn` gets the sandbox's
   * templateID and the build it started from; `not_found` when unknown.
   */
  runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T>;
  /** True when a running or paused sandbox uses the template. */
  isTemplateInUse(templateID: string): boolean;
  /**
   * Starts a sandbox from `templateID` (a checkpoint of `parentID`) with
   * every policy of the parent (the fields of `FORK_INHERITS` in
   * fork-policy.ts) and returns its `Sandbox` body, with the fork's own
   * tokens; `not_found` when the parent is unknown.
   */
  createFork(parentID: string, templateID: string, timeoutSec: number): Promise<object>;
}

/** A template as {@link TemplateLookup.resolve} finds it. */
export interface ResolvedTemplate {
  templateID: string;
  buildID?: string | undefined;
  alias?: string | undefined;
  layers: string[];
  envs: Record<string, string>;
  defaultUser: string;
  defaultWorkdir?: string | undefined;
  startCmd?: string | undefined;
  readyCmd?: string | undefined;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  envdVersion: string;
}

/** The part of the template registry the manager uses (see templates/registry.ts). */
export interface TemplateLookup {
  resolve(idOrName: string): ResolvedTemplate | undefined;
  markSpawned(templateID: string): void;
  /**
   * Registers a listener awaited before an unused layer is deleted.
   * @default no notification (nothing is ever deleted under the pool)
   */
  onLayerRelease?(listener: (layerId: string) => Promise<void>): void;
}

/** What a new sandbox is asked to be. */
export interface CreateSandboxInput {
  template: string;
  timeoutSec: number;
  secure: boolean;
  allowInternetAccess: boolean;
  autoPause: boolean;
  /** False: auto-pause is filesystem-only. @default true: the pause keeps memory */
  autoPauseMemory?: boolean | undefined;
  autoResume: boolean;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  /**
   * Volumes to mount, already resolved.
   * @default [] (none)
   */
  volumeMounts?: ResolvedVolumeMount[] | undefined;
  /** E2B's `network` options. @default none: no outbound rules, public ports */
  network?: SandboxNetwork | undefined;
}

/** Options of `SandboxManager.open`. */
export interface SandboxManagerOptions {
  dataDir: string;
  runtime: SandboxRuntime;
  templates: TemplateLookup;
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
}
