/**
 * The templates and snapshots side of the local control service.
 *
 * @module
 */
export {
  createTemplateRegistry,
  type ResolvedTemplate,
  type TemplateRegistry,
  type TemplateRegistryOptions,
} from "./registry";
export { templateRoutes } from "./routes";
export type { SandboxesView, TemplateRouteDeps } from "./deps";
