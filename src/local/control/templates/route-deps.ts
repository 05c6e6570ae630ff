/**
 * What the template routes depend on.
 *
 * @module
 */
import type { SandboxRuntime } from "../../runtime/types";
import type { SandboxManagerView } from "../sandboxes/manager-view";
import type { TemplateRegistry } from "./lookup";

/** Dependencies of {@link templateRoutes}. */
export interface TemplateRouteDeps {
  /** The registry from `createTemplateRegistry`. */
  registry: TemplateRegistry;
  /** The runtime that captures snapshot layers. */
  runtime: SandboxRuntime;
  /** The sandboxes side. */
  sandboxes: SandboxManagerView;
  /** The service's base URL, e.g. `http://127.0.0.1:41234`, for upload links. */
  publicUrl: () => string;
  /**
   * Where to report background failures.
   * @default ignores them
   */
  log?: (line: string) => void;
}
