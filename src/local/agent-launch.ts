/**
 * Where the agent bundle is on the host. Its paths inside a sandbox are in
 * `src/wire/agent-paths.ts`, which the agent imports too.
 *
 * @module
 */
import * as path from "node:path";

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
