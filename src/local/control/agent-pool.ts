/**
 * The service's connections to a sandbox's agent: one keep-alive pool per
 * sandbox, shared by the relay of the clients' requests (proxy/forward.ts) and the
 * service's own calls (agent-client.ts, agent-post.ts: `/init`, the warm
 * pool's warm-up command, a template build's steps).
 *
 * Why one pool: a warm-pool member's `/init` and warm-up command leave a
 * connection open, and the first command a create's client sends is relayed
 * over it instead of a new one. With a pool of the relay's own and Node's
 * global agent for the service's calls, that command waited for a new
 * connection to the agent (0.5 ms of a 10 ms first command in a loop of
 * creates like bench:local's, timed at the relay; 0.18 ms reusing one), and
 * every member held two connections (docs/benchmarks.md, "The warm pool under
 * a tight loop of creates").
 *
 * @module
 */
import * as http from "node:http";
import type { RuntimeSandbox } from "../runtime/types";

/**
 * Buffer size of every socket a sandbox's bytes are relayed through: the
 * client's connection to the service (set on the server) and the service's
 * connections to the agents. With Node's 16 KiB default each 64 KiB read
 * overflowed the writing side's buffer, so every chunk paused and resumed the
 * reading side (two more system calls and an event-loop turn per 64 KiB); at
 * 1 MiB a bulk transfer streams without that: the service's CPU per GiB fell
 * from 1.54 to 1.28 s uploading and from 1.24 to 0.96 s downloading through
 * the SDK (bench/transfer.js, 512 MiB). Memory stays bounded: at most this
 * much is queued per direction of a connection before backpressure stops
 * the reader.
 */
export const RELAY_HIGH_WATER_MARK = 1024 * 1024;

/** Idle connections are dropped well before the agent's 640 s idle timeout. */
const IDLE_MS = 30_000;

/** What a pool is made for: a sandbox's agent socket, and its end when known. */
export type AgentEndpoint = Pick<RuntimeSandbox, "agentSocket"> &
  Partial<Pick<RuntimeSandbox, "exited">>;

/** The pool of each sandbox, by the object that stands for it (its runtime sandbox). */
const pools = new WeakMap<object, http.Agent>();

/**
 * The connection pool to `sandbox`'s agent, made on first use. Reusing
 * connections matters for correctness, not only speed: with one connection
 * per exchange the agent answers and closes while the service may still be
 * ending the request, and that write fails with EPIPE although the answer
 * arrived. The pool dies with the sandbox: its sockets close when the agent
 * exits, and it is destroyed once `exited` settles when the sandbox has one.
 * Keyed by the object, not the socket's path: a sandbox resumed at the same
 * path is another object, so it never gets a socket of its stopped agent.
 */
export function agentPool(sandbox: AgentEndpoint): http.Agent {
  let pool = pools.get(sandbox);
  if (!pool) {
    // Passed through to each socket the pool opens (net.createConnection).
    const options: http.AgentOptions & {
      readableHighWaterMark: number;
      writableHighWaterMark: number;
    } = {
      keepAlive: true,
      timeout: IDLE_MS,
      readableHighWaterMark: RELAY_HIGH_WATER_MARK,
      writableHighWaterMark: RELAY_HIGH_WATER_MARK,
    };
    const made = new http.Agent(options);
    pools.set(sandbox, made);
    void sandbox.exited?.then(() => made.destroy());
    pool = made;
  }
  return pool;
}
