/**
 * The plugin's output as the CLI forwards it: line by line, stdout as `info`
 * and stderr as `info#err` diagnostics, blank lines dropped
 * (docs/pulumi-provider.md#provider-output-and-diagnostics).
 *
 * @module
 */
import type { Diagnostic } from "./result";

/** Splits the plugin's output chunks into diagnostics, one per non-blank line. */
export class DiagnosticCollector {
  readonly diagnostics: Diagnostic[] = [];
  private readonly pending = { stdout: "", stderr: "" };

  /** Adds a chunk of `stream`; complete lines become diagnostics at once. */
  push(text: string, stream: "stdout" | "stderr"): void {
    const lines = (this.pending[stream] + text).split("\n");
    this.pending[stream] = lines.pop() ?? "";
    for (const line of lines) this.add(line, stream);
  }

  /** Ends both streams: a last line without a newline still counts. */
  flush(): Diagnostic[] {
    for (const stream of ["stdout", "stderr"] as const) {
      this.add(this.pending[stream], stream);
      this.pending[stream] = "";
    }
    return this.diagnostics;
  }

  private add(line: string, stream: "stdout" | "stderr"): void {
    const message = line.replace(/\r$/, "");
    if (message.trim() === "") return;
    this.diagnostics.push({ severity: stream === "stdout" ? "info" : "info#err", message });
  }
}
