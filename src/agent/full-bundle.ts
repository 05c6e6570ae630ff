/**
 * Loads the agent's full bundle (`agent-full.js`) the first time the agent
 * needs it. The agent ships as two bundles (scripts/bundle-agent.js):
 *
 * - `agent.js`, the boot bundle: main.ts and what it imports statically,
 *   which is all a start needs to answer `/health` and `/init`
 *   (boot-handler.ts), about 30 KB, which node loads as any script;
 * - `agent-full.js`, every module main.ts's closure imports dynamically (the
 *   full handler, the sudo server and client) with theirs, about 680 KB, read
 *   and compiled here, with V8's code cache beside it (`agent-full.js.cache`),
 *   on the first such import.
 *
 * Reading and compiling the whole bundle at start, even from its code cache,
 * was about 0.2x of a `node -e ""` in CPU time before `/health` could be
 * answered, on every sandbox's cold start. Each module lives in one bundle
 * only: the full bundle imports the boot bundle's modules it uses as
 * `agent-boot:<path>`, answered from {@link FullBundleOptions.shared}.
 *
 * The cache lies in the bundles' read-only folder, so nothing in a sandbox
 * can change it. V8 refuses a cache made from other source or by another V8
 * version or flags; the bundle then compiles as usual.
 *
 * @module
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import * as vm from "node:vm";

/** File name of the full bundle beside the boot bundle. */
const FULL_FILE = "agent-full.js";
const CODE_CACHE_SUFFIX = ".cache";
/** How the full bundle names a module of the boot bundle (scripts/bundle-agent.js writes it). */
const SHARED_PREFIX = "agent-boot:";

/** The evaluated full bundle. */
interface FullBundle {
  script: vm.Script;
  /** Its modules by path from the repository root. */
  modules: Record<string, unknown>;
}

let loaded: FullBundle | undefined;

function readIfPresent(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

function load(dir: string, shared: Record<string, unknown>): FullBundle {
  const bundle = path.join(dir, FULL_FILE);
  const cachedData = readIfPresent(`${bundle}${CODE_CACHE_SUFFIX}`);
  // The CommonJS wrapper node itself puts around a module.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundle, "utf8")}\n})`,
    { filename: bundle, ...(cachedData ? { cachedData } : {}) },
  );
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: (id: string) => unknown,
    module: { exports: object },
    filename: string,
    dirname: string,
  ) => void;
  const nodeRequire = createRequire(bundle);
  const requireShared = (id: string): unknown => {
    if (!id.startsWith(SHARED_PREFIX)) return nodeRequire(id);
    const key = id.slice(SHARED_PREFIX.length);
    if (!(key in shared)) {
      throw new Error(`${FULL_FILE} needs ${key}, which this agent.js lacks: npm run build again`);
    }
    return shared[key];
  };
  const mod = { exports: {} as { modules?: Record<string, unknown> } };
  wrapper(mod.exports, requireShared, mod, bundle, dir);
  return { script, modules: mod.exports.modules ?? {} };
}

/** Options of {@link fullBundleModule}. */
interface FullBundleOptions {
  /** The boot bundle's modules by path from the repository root. */
  shared: Record<string, unknown>;
  /** The folder of both bundles. @default this module's (the boot bundle's) */
  dir?: string;
}

/** The module at `key` (its path from the repository root) of the full bundle, loaded once. */
export function fullBundleModule(key: string, options: FullBundleOptions): unknown {
  loaded ??= load(options.dir ?? __dirname, options.shared);
  const found = loaded.modules[key];
  if (found === undefined) {
    throw new Error(`${FULL_FILE} has no module ${key}: npm run build again`);
  }
  return found;
}

/** The full bundle's script once loaded, to take its code cache from (scripts/bundle-agent.js). */
export function fullBundleScript(): vm.Script | undefined {
  return loaded?.script;
}
