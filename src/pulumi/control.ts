/**
 * The control client the Pulumi functions use.
 *
 * @module
 */
import { createControlClient, type ControlClient } from "../client/control";
import type { ResolvedConfig } from "../config";

/** A control client over `config`. */
export function controlClientFor(config: ResolvedConfig): ControlClient {
  return createControlClient({ config });
}
