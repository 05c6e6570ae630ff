/**
 * Diagnostics: every problem Terraform shows comes from here, with our error's
 * message (already redacted), the attribute path when one is at fault, and the
 * tail of the log for a failed build or command.
 *
 * @module
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type AttributePath,
  type Diagnostic,
  DiagnosticSchema,
  Diagnostic_Severity,
} from "../../gen/terraform/tfplugin6_pb";
import { SandboxIacError, redact } from "../../errors";

/** An error diagnostic. */
export function errorDiagnostic(
  summary: string,
  detail = "",
  attribute?: AttributePath,
): Diagnostic {
  const init: MessageInitShape<typeof DiagnosticSchema> = {
    severity: Diagnostic_Severity.ERROR,
    summary: redact(summary),
    detail: redact(detail),
    ...(attribute ? { attribute } : {}),
  };
  return create(DiagnosticSchema, init);
}

/** A warning diagnostic: Terraform shows it and goes on. */
export function warningDiagnostic(
  summary: string,
  detail: string,
  attribute?: AttributePath,
): Diagnostic {
  return create(DiagnosticSchema, {
    severity: Diagnostic_Severity.WARNING,
    summary: redact(summary),
    detail: redact(detail),
    ...(attribute ? { attribute } : {}),
  });
}

/** Log lines kept for a failure's diagnostic. */
export const LOG_TAIL_LINES = 20;

/**
 * The diagnostic of an operation that threw. A failed build or command gets
 * the last lines of its log in the detail (unless the message has them already).
 */
export function failureDiagnostic(
  what: string,
  err: unknown,
  logTail: readonly string[],
): Diagnostic {
  const message = err instanceof Error ? err.message : String(err);
  const withLog =
    SandboxIacError.is(err) &&
    (err.code === "build_failed" || err.code === "command_failed") &&
    logTail.length > 0;
  const tail = logTail.filter((line) => !message.includes(line));
  const detail =
    withLog && tail.length > 0
      ? `${message}\n\nLast lines of the log:\n${tail.join("\n")}`
      : message;
  return errorDiagnostic(`${what} failed`, detail);
}
