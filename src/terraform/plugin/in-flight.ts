/**
 * The provider calls still running, so that a closing server lets them end:
 * a call aborted by a stop still kills what it started (the setup command in
 * the user's sandbox, the sandbox it created), and the process must not exit
 * under it.
 *
 * @module
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { Provider } from "../../gen/terraform/tfplugin6_pb";

/** Counts calls in flight and tells when none is left. */
export class InFlight {
  private count = 0;
  private readonly idle: (() => void)[] = [];

  /** `call`, counted until it settles. */
  track<T>(call: Promise<T>): Promise<T> {
    this.count++;
    return call.finally(() => {
      if (--this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  /** Resolves once no call is in flight, or after `maxMs` (a call that never ends keeps nothing alive). */
  settled(maxMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle.push(resolve);
      setTimeout(resolve, maxMs).unref();
    });
  }
}

/**
 * `provider` with each unary call counted in `inFlight`. Streaming methods
 * (none of the provider's calls stream) pass through as they are.
 */
export function trackedProvider(
  provider: Partial<ServiceImpl<typeof Provider>>,
  inFlight: InFlight,
): Partial<ServiceImpl<typeof Provider>> {
  const tracked: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(provider)) {
    if (typeof method !== "function") continue;
    tracked[name] = (...args: unknown[]): unknown => {
      const result: unknown = (method as (...a: unknown[]) => unknown).apply(provider, args);
      return result instanceof Promise ? inFlight.track(result) : result;
    };
  }
  return tracked;
}
