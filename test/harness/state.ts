/**
 * The harness's state file: the resources of one stack with their values in
 * wire form (secrets sig-wrapped in plaintext, so tests can assert secretness;
 * the real CLI encrypts them instead).
 *
 * @module
 */
import * as fs from "node:fs";
import { encryptSecrets, type Wire, type WireMap } from "./secrets";

/** Resource options the engine keeps with each resource. */
export interface ResourceOptions {
  /** Refuse to delete the resource. @default false: deletes proceed */
  protect?: boolean;
  /** Delete the old resource before creating its replacement. @default false: create-before-delete */
  deleteBeforeReplace?: boolean;
  /** Top-level input keys whose changes are ignored. @default none */
  ignoreChanges?: string[];
  /** Top-level input keys whose changes force a replacement (`"*"` for all). @default none */
  replaceOnChanges?: string[];
  /** Output keys stored as secrets whatever the provider returns. @default none */
  additionalSecretOutputs?: string[];
  /** Drop the resource from state without calling the provider's `delete`. @default false */
  retainOnDelete?: boolean;
}

/** One resource in the state file. */
export interface ResourceRecord {
  urn: string;
  type: string;
  /** The provider's ID; empty for a resource created during a preview (never saved). */
  id: string;
  /** The last inputs the program gave (after `check`), in wire form. */
  inputs: WireMap;
  /** The provider's outputs, re-annotated with secrets, including `__provider`. */
  outputs: WireMap;
  /** The parent's URN, when the parent is not the root stack. */
  parent?: string;
  /** URNs this resource depends on (`dependsOn` plus input dependencies). */
  dependencies: string[];
  options: ResourceOptions;
  /** Replaced (or left by a failed run) and still to be deleted by the next `up`. */
  pendingDelete?: boolean;
}

/** The whole state file. */
export interface HarnessState {
  resources: ResourceRecord[];
}

/** Reads the state file; a missing file is an empty stack. */
export function readState(file: string): HarnessState {
  if (!fs.existsSync(file)) return { resources: [] };
  return JSON.parse(fs.readFileSync(file, "utf8")) as HarnessState;
}

/** Writes the state file atomically, so a crash never leaves half a file. */
export function writeState(file: string, state: HarnessState): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(tmp, file);
}

/**
 * The state as the CLI's checkpoint holds it, as text: the harness keeps
 * secrets sig-wrapped in clear (so tests can assert secretness), the CLI
 * encrypts them, so a value found in this text is a value stored in clear.
 */
export function checkpointText(state: HarnessState): string {
  return JSON.stringify(encryptSecrets(state as unknown as Wire), null, 2);
}
