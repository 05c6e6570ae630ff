/**
 * Where the agent bundle lives on the host. Its paths inside a sandbox are
 * the wire's (src/wire/sandbox-paths.ts).
 *
 * @module
 */
import * as path from "node:path";

/**
 * Node flags of the agent. One V8 worker thread instead of Node's four: each
 * idle thread holds its stack and its own malloc arena in every sandbox
 * (about 1 MiB of PSS per agent measured on 2 cores, where Node's own
 * `--v8-pool-size=0` estimate also gives one), and the agent's small heap
 * gains nothing from parallel GC or compilation; its start's CPU time did not
 * change.
 *
 * No V8 flag: one changes V8's flag hash, and V8 then refuses the code cache
 * Node ships for its own modules, which then compile at every start (the
 * agent caps its young generation once started instead: src/agent/main.ts).
 */
export const AGENT_NODE_FLAGS: readonly string[] = ["--v8-pool-size=1"];

/**
 * Host path of the directory holding the bundled agent (`agent.js`), built by
 * `npm run build` (scripts/bundle-agent.js) from `src/agent/main.ts`.
 */
export function agentBundleDirOnHost(): string {
  // dist/local/agent-launch.js -> dist/agent ; src/local/agent-launch.ts -> dist/agent
  const here = __dirname;
  const root =
    path.basename(path.dirname(here)) === "dist" || here.includes(`${path.sep}dist${path.sep}`)
      ? path.resolve(here, "..")
      : path.resolve(here, "..", "..", "dist");
  return path.join(root, "agent");
}
