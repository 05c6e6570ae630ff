/**
 * How the Pulumi dynamic-provider plugin learns that the user stopped the
 * operation, and what it does then (docs/pulumi-provider.md, "Ctrl-C").
 *
 * Pulumi's Node dynamic-provider server answers the engine's `Cancel` RPC
 * (sent on the first Ctrl-C) with an empty reply and tells the provider
 * nothing (`@pulumi/pulumi/cmd/dynamic-provider`: `cancel(call, callback)
 * { callback(undefined, new Empty()) }`; `dynamic.ResourceProvider` has no
 * cancel method), so that first Ctrl-C cannot be seen here: the engine waits
 * for the steps in flight, which finish and are recorded. What can be seen is
 * the engine closing the plugin (a second Ctrl-C, or the end of the run): it
 * sends SIGINT to the plugin's process group, waits 5 s, then SIGKILLs it
 * (`sdk/go/common/resource/plugin/plugin.go`, `InterruptChildren`). On that
 * SIGINT (or a SIGTERM) every operation in flight is stopped through its
 * context's signal, which applies the core's rule (`resources/core/stop.ts`),
 * and the plugin exits once they have cleaned up, within that grace period.
 *
 * @module
 * @internal
 */
import { SandboxIacError } from "../errors";

/** The engine SIGKILLs the plugin 5 s after its SIGINT: exit before that. */
const GRACE_MS = 4_000;
/** Exit codes of a process ended by SIGINT and SIGTERM, as a shell reports them. */
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

let stop: AbortController | undefined;
const inFlight = new Set<Promise<unknown>>();

/** True in the dynamic-provider plugin process (not in a program, nor in a test runner). */
function inPlugin(): boolean {
  return /[\\/]cmd[\\/]dynamic-provider([\\/]index\.js)?$/.test(process.argv[1] ?? "");
}

function onSignal(name: keyof typeof EXIT_CODES): void {
  const code = EXIT_CODES[name];
  if (stop!.signal.aborted) process.exit(code); // a second signal: go now
  stop!.abort(
    new SandboxIacError("canceled", "the Pulumi engine stopped the provider (Ctrl-C)", {
      operation: "pulumi.stop",
    }),
  );
  setTimeout(() => process.exit(code), GRACE_MS).unref();
  void Promise.allSettled([...inFlight]).then(() => process.exit(code));
}

/**
 * The signal that fires when the plugin is told to stop; installs the
 * SIGINT/SIGTERM handlers on first use. `undefined` outside the plugin
 * process, whose signals are not ours to take.
 */
export function pluginStopSignal(): AbortSignal | undefined {
  if (!inPlugin()) return undefined;
  if (!stop) {
    stop = new AbortController();
    process.on("SIGINT", () => onSignal("SIGINT"));
    process.on("SIGTERM", () => onSignal("SIGTERM"));
  }
  return stop.signal;
}

/** Runs one provider operation, counted among those a stop waits for before the plugin exits. */
export async function tracked<T>(operation: () => Promise<T>): Promise<T> {
  const running = operation();
  inFlight.add(running);
  try {
    return await running;
  } finally {
    inFlight.delete(running);
  }
}
