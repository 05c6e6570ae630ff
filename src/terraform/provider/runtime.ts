/**
 * What the provider holds between calls: the resolved configuration (set by
 * `ConfigureProvider`), the base directory for relative paths (Terraform's
 * working directory, the provider's cwd) and the signal `StopProvider` aborts.
 *
 * @module
 */
import type { ResolvedConfig } from "../../config";
import { SandboxIacError } from "../../errors";
import type { ResourceContext } from "../../resources/core/lifecycle";
import { LOG_TAIL_LINES } from "./diagnostics";

/** A resource context plus the last log lines of the operation. */
export interface OperationContext extends ResourceContext {
  /** The last {@link LOG_TAIL_LINES} lines logged by the operation. */
  readonly logTail: readonly string[];
}

/** Provider-wide state. */
export class ProviderRuntime {
  private config: ResolvedConfig | undefined;
  private stop = new AbortController();

  /**
   * @param baseDir - where relative local paths resolve: Terraform starts
   *   providers in the working directory of the run
   * @param log - where progress lines go (stderr: go-plugin logs it under TF_LOG)
   */
  constructor(
    readonly baseDir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Sets the configuration (`ConfigureProvider`). */
  configure(config: ResolvedConfig): void {
    this.config = config;
  }

  /**
   * Aborts everything in flight (`StopProvider`, or Terraform gone); later
   * calls get a fresh signal. `why` ends the operations' error message.
   */
  stopAll(why = "Terraform asked the provider to stop"): void {
    this.stop.abort(
      new SandboxIacError("canceled", why, {
        operation: "terraform.stop",
      }),
    );
    this.stop = new AbortController();
  }

  /**
   * A context for one operation; it ends early when `callSignal` or
   * `StopProvider` aborts. Its log lines start with `label` (see resources/core/log-label.ts).
   */
  context(callSignal?: AbortSignal, label?: string): OperationContext {
    if (!this.config) {
      throw new SandboxIacError(
        "internal",
        "the provider was used before ConfigureProvider: Terraform always configures it first",
        { operation: "terraform.context" },
      );
    }
    const logTail: string[] = [];
    const signals = [this.stop.signal, ...(callSignal ? [callSignal] : [])];
    return {
      config: this.config,
      baseDir: this.baseDir,
      signal: AbortSignal.any(signals),
      logTail,
      log: (line: string) => {
        logTail.push(line);
        if (logTail.length > LOG_TAIL_LINES) logTail.shift();
        this.log(label ? `${label}: ${line}` : line);
      },
    };
  }
}
