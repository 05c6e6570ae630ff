/**
 * "Already gone" handling shared by the resources: reads treat a missing
 * object as deleted, deletes treat it as done.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";

/** Resolves `fallback` when `call` fails with `not_found`; any other failure is rethrown. */
export async function unlessNotFound<T, F>(call: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await call;
  } catch (err) {
    if (SandboxIacError.hasCode(err, "not_found")) return fallback;
    throw err;
  }
}
