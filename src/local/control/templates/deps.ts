/**
 * What the template routes depend on.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { TemplateRegistry } from "./registry";

/**
 * The sandboxes side as the templates side needs it (the agreed
 * `SandboxManagerView` of `sandboxes/manager-contracts.ts`).
 */
export interface SandboxesView {
  /** True when the sandbox is running or paused. */
  exists(sandboxID: string): boolean;
  /**
   * Runs `fn` while the sandbox's processes are paused; `fn` gets the
   * sandbox's template id (and, when the manager knows it, its build id).
   * Throws an `ApiError` 404 when the sandbox is unknown.
   */
  runWhileFrozen<T>(
    sandboxID: string,
    fn: (templateID: string, buildID?: string) => Promise<T>,
  ): Promise<T>;
  /** True when a running or paused sandbox uses the template. */
  isTemplateInUse(templateID: string): boolean;
}

/** Dependencies of {@link templateRoutes}. */
export interface TemplateRouteDeps {
  /** The registry from `createTemplateRegistry`. */
  registry: TemplateRegistry;
  /** The runtime that captures snapshot layers. */
  runtime: SandboxRuntime;
  /** The sandboxes side. */
  sandboxes: SandboxesView;
  /** The service's base URL, e.g. `http://127.0.0.1:41234`, for upload links. */
  publicUrl: () => string;
  /**
   * Where to report background failures.
   * @default ignores them
   */
  log?: (line: string) => void;
}
