/**
 * The `SandboxReader` dynamic resource: the fields of an existing sandbox as
 * outputs. See `src/resources/sandbox-reader/sandbox-reader.md`.
 *
 * @module
 */
import type { SandboxReaderArgs as SandboxReaderInputArgs } from "../resources/sandbox-reader/sandbox-reader.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link SandboxReader}. */
export type SandboxReaderArgs = ResourceArgs<SandboxReaderInputArgs>;

/**
 * Reads an existing sandbox. It never changes the sandbox, and deleting it
 * deletes nothing. `envdAccessToken` is a secret output.
 */
export class SandboxReader extends dynamicResourceClass("SandboxReader") {}
