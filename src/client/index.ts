/**
 * `sandbox-iac/client`: the typed clients alone, for a program that talks to
 * a service without declaring resources. Loads neither the resources nor an
 * adapter: the control-API client (templates, builds, sandboxes, snapshots,
 * volumes, secrets) and the in-sandbox client (processes, terminals,
 * filesystem, file transfer, signed URLs), with the error type both throw.
 *
 * @module
 */
export * from "./control";
export * from "./sandbox";
export type { RetryPolicy } from "./retry";
export { ERROR_CODES, SandboxIacError } from "../errors";
export type { ErrorCode, ErrorDetails } from "../errors";
