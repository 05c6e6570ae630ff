/**
 * What the template routes depend on.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { SandboxManagerView } from "../sandboxes/manager-options";
import type { TemplateRegistry } from "./registry";

/** The sandboxes side as the templates side needs it (the manager's own view). */
type SandboxesView = SandboxManagerView;

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
