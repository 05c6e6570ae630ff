/**
 * The embedded local sandbox service (`sandbox-iac/local`).
 *
 * @module
 */
export { defaultDataDir, startLocalService } from "./service";
export type { LocalService, LocalServiceOptions } from "./service-options";
