/**
 * Test doubles for unit tests of the sandbox client: a transport and a fetch
 * that fail the test when anything reaches them.
 *
 * @internal
 * @module
 */
import { createRouterTransport, type Transport } from "@connectrpc/connect";

/** A Connect transport with no routes that records every attempt. */
export function neverTransport(calls: string[] = []): Transport {
  const inner = createRouterTransport(() => undefined);
  return {
    unary(method, ...rest) {
      calls.push(method.name);
      return inner.unary(method, ...rest);
    },
    stream(method, ...rest) {
      calls.push(method.name);
      return inner.stream(method, ...rest);
    },
  };
}

/** A fetch that records every attempt and answers 599. */
export function neverFetch(calls: string[] = []): typeof fetch {
  return async (input) => {
    calls.push(String(input instanceof Request ? input.url : input));
    return new Response("unexpected request", { status: 599 });
  };
}
