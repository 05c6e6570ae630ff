/**
 * The templates and snapshots side of the local control service.
 *
 * @module
 */
export { createTemplateRegistry } from "./registry";
export { templateRoutes } from "./routes";
