/**
 * What a create asks a new sandbox to be, as the routes and the fork policy
 * hand it to the manager.
 *
 * @module
 */
import type { ResolvedVolumeMount } from "../volumes/mounts";
import type { SandboxNetwork } from "./record";

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
