/**
 * The `Headers` class of the agent's full bundle: scripts/bundle-agent.js
 * injects it for the global name, so Connect's request and response headers
 * in the agent are minipass-fetch's implementation of the Fetch standard's
 * `Headers` rather than Node's global one.
 *
 * Why: Node's global `Headers` is a lazy getter that loads Node's whole
 * bundled undici (its fetch, its HTTP/1 and HTTP/2 clients, `node:http2`,
 * the llhttp WebAssembly) on first use, which in the agent is its first RPC:
 * measured 30 ms of CPU on each pool member's warm-up command, about a third
 * of what the agent spends before it is ready, for a class of 270 lines. The
 * agent uses no fetch, `Request` or `Response`, whose brand checks would want
 * Node's class.
 *
 * @module
 */
import MinipassHeaders from "minipass-fetch/lib/headers.js";

/** The Fetch standard's `Headers`, minipass-fetch's implementation. */
export const Headers: typeof globalThis.Headers = MinipassHeaders;
