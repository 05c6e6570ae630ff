/**
 * A filesystem failure as a plain route's answer. Apart from respond.ts: the
 * errno table names Connect's codes, and the agent's boot routes (health,
 * init), which use respond.ts, answer before Connect is loaded
 * (boot-handler.ts).
 *
 * @module
 */
import { errnoReport } from "../../wire/errno";
import { SandboxIacError } from "../../errors";
import { HttpError } from "./respond";

/** An {@link HttpError} naming `what` and the errno's reason; 500 only for unknown errors. */
export function httpFsError(err: unknown, what: string): HttpError {
  if (err instanceof HttpError) return err;
  const report = errnoReport(err);
  if (report) return new HttpError(report.status, `${what}: ${report.reason}`);
  return new HttpError(500, `${what}: ${SandboxIacError.from(err, { operation: what }).reason}`);
}
