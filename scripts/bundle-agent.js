#!/usr/bin/env node
/**
 * Bundles the in-sandbox agent (src/agent/main.ts) into dist/agent/agent.js
 * and dist/agent/agent-full.js: CommonJS for Node 20 with every dependency
 * inlined (busboy included), except the native addon node-pty, which is copied next to them,
 * into dist/agent/node_modules/node-pty, so that `require("node-pty")`
 * resolves there both inside the sandbox and on the host. The agent's
 * dependencies are therefore devDependencies of the package: a library user
 * installs none of them, and the published tarball carries what the agent
 * loads (`npm pack --dry-run` lists dist/agent/node_modules/node-pty).
 *
 * The addon is the one node-pty compiled on the machine that ran the build
 * (N-API, so any Node >= 20 of that platform and architecture loads it).
 *
 * The agent starts from dist/agent/agent.js, the boot bundle: main.ts and its
 * static imports, what answers /health and /init. Every module it imports
 * dynamically is in agent-full.js, which src/agent/full-bundle.ts loads on the
 * first such import with the V8 code cache written here: the cache is taken
 * after an agent started with the flags the sandbox runs it with
 * (AGENT_NODE_FLAGS, which V8 checks), so it holds what that load compiles.
 *
 * The agent's spawner (src/agent/process/spawner.c) is compiled here, static,
 * to `dist/agent/native/spawner` with the C compiler node-pty's own build
 * needs. It is required: it gives commands pipes for their stdio, which Node
 * cannot (src/agent/process/spawner.ts), so without a compiler the build fails.
 *
 * The xattr addon of `@napi-rs/xattr` (prebuilt for this platform) is copied
 * to `dist/agent/native/xattr.node` and loaded by that path (src/agent/xattr.ts).
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");
const os = require("node:os");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const outDir = path.join(root, "dist", "agent");
const ptySrc = path.join(root, "node_modules", "node-pty");
const ptyDest = path.join(outDir, "node_modules", "node-pty");
const nativeDest = path.join(outDir, "native");

/**
 * The prebuilt `.node` of `@napi-rs/xattr` for this machine: its platform
 * package (an optional dependency npm installed for this OS, CPU and libc).
 */
function xattrAddon() {
  const pkgDir = path.dirname(require.resolve("@napi-rs/xattr/package.json"));
  const candidates = fs
    .readdirSync(path.join(pkgDir, ".."))
    .filter((d) => d.startsWith(`xattr-${process.platform}-${process.arch}`))
    .map((d) => path.join(pkgDir, "..", d))
    .flatMap((d) =>
      fs
        .readdirSync(d)
        .filter((f) => f.endsWith(".node"))
        .map((f) => path.join(d, f)),
    );
  if (candidates.length !== 1) {
    throw new Error(
      `expected one @napi-rs/xattr addon for ${process.platform}-${process.arch}, found ${JSON.stringify(candidates)}: run npm install`,
    );
  }
  return candidates[0];
}

/**
 * Compiles the spawner into `native/`: static, so that it needs none of the
 * host's libraries inside the sandbox.
 */
function buildSpawner() {
  const src = path.join(root, "src", "agent", "process", "spawner.c");
  const out = path.join(nativeDest, "spawner");
  fs.rmSync(out, { force: true });
  const cc = process.env.CC || "cc";
  const r = spawnSync(cc, ["-O2", "-Wall", "-Werror", "-static", "-o", out, src], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) {
    throw new Error(
      `${cc} could not build ${src} (${r.error?.message ?? `exit ${r.status}`}): ` +
        "the agent starts every command with pipes through it; install a C compiler and the static libc (e.g. Debian's build-essential, which node-pty's build needs too) and build again",
    );
  }
}

/**
 * Starts the bundled agent on a scratch socket in a Node with the agent's
 * flags, has it load its full handler (src/agent/boot-handler.ts) and run a
 * command, and writes the code cache of everything compiled by then.
 */
function writeCodeCache() {
  const { AGENT_NODE_FLAGS } = require(path.join(root, "dist", "local", "agent-launch.js"));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "agent-cache-"));
  const socketPath = path.join(scratch, "agent.sock");
  const program = `
    const fs = require("node:fs");
    const http = require("node:http");
    const agent = require(${JSON.stringify(path.join(outDir, "agent.js"))});
    const ask = (method, path) => new Promise((resolve, reject) => {
      const req = http.request({ socketPath: ${JSON.stringify(socketPath)}, method, path }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end(method === "POST" ? "{}" : undefined);
    });
    agent.startAgent(${JSON.stringify(socketPath)}).then(async (server) => {
      // A sandbox's start: /health and /init from the boot bundle, then the full bundle's load.
      await ask("GET", "/health");
      await ask("POST", "/init");
      await ask("GET", "/envs");
      // A command too, as every pool member's warm-up runs one (warm-up.ts), so that what
      // its first Connect request compiles (the router, protobuf, the process service) is in
      // the cache: measured 47 -> 42 ms of agent CPU from /health to its command's start.
      // Run as the building user; a build where that fails gets the cache without it.
      try {
        const { agentClient } = require(${JSON.stringify(path.join(root, "dist", "local", "control", "agent-client.js"))});
        const command = await agentClient({ sandboxID: "cache", agentSocket: ${JSON.stringify(socketPath)} })
          .start("true", { user: require("node:os").userInfo().username });
        await command.wait();
      } catch (err) {
        console.error("bundle-agent: the code cache holds no command's code: " + err.message);
      }
      fs.writeFileSync(${JSON.stringify(path.join(scratch, "cache"))}, agent.fullBundleScript().createCachedData());
      server.close();
      process.exit(0);
    });`;
  try {
    const r = spawnSync(process.execPath, [...AGENT_NODE_FLAGS, "-e", program], {
      stdio: ["ignore", "inherit", "inherit"],
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`the agent wrote no code cache (${r.signal ?? r.status})`);
    fs.renameSync(path.join(scratch, "cache"), path.join(outDir, "agent-full.js.cache"));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** A module's key across the two bundles: its path from the repository root. */
const keyOf = (file) => path.relative(root, file).split(path.sep).join("/");

/** Esbuild input for a generated module (onLoad's; `stdin` takes a `sourcefile` too). */
const generated = (lines) => ({ contents: lines.join("\n"), resolveDir: root, loader: "js" });

/** A module evaluating `files` that exports their namespaces by key as `name`. */
function namespacesOf(name, files) {
  return [
    ...files.map((f, i) => `import * as m${i} from ${JSON.stringify(f)};`),
    `export const ${name} = {${files.map((f, i) => `${JSON.stringify(keyOf(f))}: m${i}`).join(", ")}};`,
  ];
}

/**
 * The boot bundle's plugin: every dynamic import becomes a module of the full
 * bundle, loaded by src/agent/full-bundle.ts (recorded in `lazy`), which is
 * given the boot bundle's own modules (`bootFiles`) as `agent-shared`.
 */
function bootPlugin(lazy, bootFiles) {
  const loader = path.join(root, "src", "agent", "full-bundle.ts");
  return {
    name: "agent-boot",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== "dynamic-import" || args.pluginData === "agent-boot") return undefined;
        const r = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          pluginData: "agent-boot",
        });
        if (r.errors.length > 0) return { errors: r.errors };
        // Node's own modules stay require() calls.
        if (r.external) return { path: r.path, external: true };
        lazy.add(r.path);
        return { path: keyOf(r.path), namespace: "agent-lazy" };
      });
      build.onLoad({ filter: /.*/, namespace: "agent-lazy" }, (args) =>
        generated([
          `const { shared } = require("agent-shared");`,
          `module.exports = require(${JSON.stringify(loader)}).fullBundleModule(${JSON.stringify(args.path)}, { shared });`,
        ]),
      );
      build.onResolve({ filter: /^agent-shared$/ }, () => ({
        path: "agent-shared",
        namespace: "agent-shared",
      }));
      build.onLoad({ filter: /.*/, namespace: "agent-shared" }, () =>
        generated(namespacesOf("shared", bootFiles)),
      );
    },
  };
}

/**
 * Builds the boot bundle (agent.js: main.ts and its static imports, what
 * answers /health and /init) and the full bundle (agent-full.js: every module
 * main.ts's closure imports dynamically, with theirs). The full bundle
 * imports a boot module as `agent-boot:<key>`, which src/agent/full-bundle.ts
 * answers with the boot bundle's, so no module is evaluated twice.
 */
async function bundleBootAndFull(common) {
  const entry = {
    ...generated([
      `export * from ${JSON.stringify(path.join(root, "src", "agent", "main.ts"))};`,
      `export { fullBundleScript } from ${JSON.stringify(path.join(root, "src", "agent", "full-bundle.ts"))};`,
    ]),
    sourcefile: "agent-boot-entry.js",
  };
  // Pass 1: which modules the boot bundle holds, and which it imports dynamically.
  const lazy = new Set();
  const probe = await esbuild.build({
    ...common,
    stdin: entry,
    write: false,
    outfile: path.join(outDir, "agent.js"),
    absWorkingDir: root,
    metafile: true,
    plugins: [bootPlugin(lazy, [])],
  });
  const bootFiles = Object.keys(probe.metafile.inputs)
    .map((f) => path.resolve(root, f))
    .filter((f) => fs.existsSync(f));
  const shared = new Set(bootFiles);
  await esbuild.build({
    ...common,
    stdin: entry,
    outfile: path.join(outDir, "agent.js"),
    absWorkingDir: root,
    sourcemap: "linked",
    // Node's own modules imported dynamically as require() calls, which need no ESM loader.
    supported: { "dynamic-import": false },
    plugins: [bootPlugin(new Set(), bootFiles)],
  });
  await esbuild.build({
    ...common,
    stdin: { ...generated(namespacesOf("modules", [...lazy])), sourcefile: "agent-full-entry.js" },
    outfile: path.join(outDir, "agent-full.js"),
    absWorkingDir: root,
    external: ["node-pty"],
    // Connect's `Headers`: not Node's global one, whose first use loads Node's whole undici.
    inject: [path.join(root, "src", "agent", "fetch-headers.ts")],
    sourcemap: "linked",
    plugins: [
      {
        name: "agent-shared",
        setup(build) {
          build.onResolve({ filter: /^[./]/ }, async (args) => {
            if (args.pluginData === "agent-shared") return undefined;
            const r = await build.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              pluginData: "agent-shared",
            });
            if (r.errors.length > 0 || !shared.has(r.path)) return undefined;
            return { path: `agent-boot:${keyOf(r.path)}`, external: true };
          });
        },
      },
    ],
  });
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  const common = {
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    legalComments: "none",
    logLevel: "warning",
  };
  // Bundles of an older build would be loaded by nothing.
  for (const f of fs.readdirSync(outDir)) {
    if (/\.(js|cache|map)$/.test(f)) fs.rmSync(path.join(outDir, f));
  }
  await bundleBootAndFull(common);
  // node-pty: its JS (lib/, without its tests and source maps), its
  // manifest and licence, and the compiled addon only.
  fs.rmSync(ptyDest, { recursive: true, force: true });
  fs.mkdirSync(path.join(ptyDest, "build", "Release"), { recursive: true });
  for (const f of ["package.json", "LICENSE"]) {
    fs.copyFileSync(path.join(ptySrc, f), path.join(ptyDest, f));
  }
  fs.cpSync(path.join(ptySrc, "lib"), path.join(ptyDest, "lib"), {
    recursive: true,
    filter: (src) => !src.endsWith(".test.js") && !src.endsWith(".map"),
  });
  for (const f of fs.readdirSync(path.join(ptySrc, "build", "Release"))) {
    if (f.endsWith(".node") || f === "spawn-helper") {
      fs.copyFileSync(
        path.join(ptySrc, "build", "Release", f),
        path.join(ptyDest, "build", "Release", f),
      );
    }
  }
  if (!fs.readdirSync(path.join(ptyDest, "build", "Release")).some((f) => f.endsWith(".node"))) {
    throw new Error(
      `no compiled node-pty addon in ${path.join(ptySrc, "build", "Release")}; ` +
        "run `npm install` (node-pty compiles it with node-gyp) and build again",
    );
  }
  // The xattr addon, loaded by its absolute path (src/agent/xattr.ts).
  fs.mkdirSync(nativeDest, { recursive: true });
  fs.copyFileSync(xattrAddon(), path.join(nativeDest, "xattr.node"));
  buildSpawner();
  writeCodeCache();
}

main().catch((err) => {
  console.error(`bundle-agent: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
