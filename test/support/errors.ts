/**
 * Small assertions shared by the tests of the typed clients.
 */
import { SandboxIacError } from "../../src/errors";

/** The `SandboxIacError` code `promise` rejects with, or `"ok"` when it resolves; other errors are rethrown. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (SandboxIacError.is(error)) return error.code;
    throw error;
  }
  return "ok";
}
