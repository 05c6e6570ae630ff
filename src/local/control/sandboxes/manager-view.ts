/**
 * What the templates side may ask of the sandbox manager (forks, snapshots
 * of a running sandbox, whether a template is in use); the manager
 * implements it.
 *
 * @module
 */

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
