/**
 * The agent's entry point (`dist/agent/agent.js`): runs the agent's bundle
 * (`agent-bundle.js`, from main.ts) with V8's code cache beside it
 * (`agent-bundle.js.cache`, written by scripts/bundle-agent.js). Compiling
 * the bundle was the largest part of an agent's start after Node's own; every
 * sandbox start and every `sudo` inside a sandbox pays it.
 *
 * The cache lies in the bundle's read-only folder, so nothing in a sandbox can
 * change it. V8 refuses a cache made from other source or by another V8
 * version or flags; the bundle then compiles as usual.
 *
 * @module
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import * as vm from "node:vm";

/** File names beside this entry point. */
const BUNDLE_FILE = "agent-bundle.js";
const CODE_CACHE_SUFFIX = ".cache";

type AgentMain = typeof import("./main");

/** A compiled and evaluated bundle, and the script to take a code cache from. */
export interface LoadedAgent {
  script: vm.Script;
  exports: AgentMain;
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Compiles and evaluates the bundle in `dir`, with its code cache when there is one. */
export function loadAgentBundle(dir: string = __dirname): LoadedAgent {
  const bundle = path.join(dir, BUNDLE_FILE);
  const cachedData = readIfPresent(`${bundle}${CODE_CACHE_SUFFIX}`);
  // The CommonJS wrapper node itself puts around a module.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundle, "utf8")}\n})`,
    { filename: bundle, ...(cachedData ? { cachedData } : {}) },
  );
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
  ) => void;
  const mod = { exports: {} };
  wrapper(mod.exports, createRequire(bundle), mod, bundle, dir);
  return { script, exports: mod.exports as AgentMain };
}

if (require.main === module) loadAgentBundle().exports.main();
