/**
 * Sandbox ids in the service's paths: the grammar is the wire's
 * (src/wire/ids.ts); this maps a bad one to E2B's 400.
 *
 * @module
 */
import { EXAMPLE_SANDBOX_ID, parseSandboxIDPath } from "../../../wire/ids";
import { serviceError } from "../http";

export { newClientID, newSandboxID } from "../../../wire/ids";

/**
 * The sandbox id of a path parameter: the part before a `-`.
 * Throws `invalid_argument` for more than one `-` or characters outside `[a-z0-9]`.
 */
export function parseSandboxID(raw: string): string {
  const parsed = parseSandboxIDPath(raw);
  if (parsed === undefined) {
    throw serviceError(
      "invalid_argument",
      `Invalid sandbox ID ${JSON.stringify(raw.slice(0, 80))}: use the sandboxID returned by create, e.g. ${EXAMPLE_SANDBOX_ID}`,
    );
  }
  return parsed.sandboxID;
}
