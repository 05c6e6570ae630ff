#!/usr/bin/env node
/**
 * Bundles the in-sandbox agent (src/agent/main.ts) into dist/agent/agent.js:
 * one CommonJS file for Node 20 with every dependency inlined, except the
 * native addon node-pty, which is copied next to it so that
 * `require("node-pty")` resolves inside the sandbox, and the xattr addon of
 * `@napi-rs/xattr`, copied to `native/xattr.node` and loaded by that path.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
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

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(root, "src", "agent", "main.ts")],
    outfile: path.join(outDir, "agent.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["node-pty"],
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "warning",
  });
  // node-pty: its JS (lib/), its manifest, and the compiled addon only.
  fs.rmSync(ptyDest, { recursive: true, force: true });
  fs.mkdirSync(path.join(ptyDest, "build", "Release"), { recursive: true });
  fs.copyFileSync(path.join(ptySrc, "package.json"), path.join(ptyDest, "package.json"));
  fs.cpSync(path.join(ptySrc, "lib"), path.join(ptyDest, "lib"), { recursive: true });
  for (const f of fs.readdirSync(path.join(ptySrc, "build", "Release"))) {
    if (f.endsWith(".node") || f === "spawn-helper") {
      fs.copyFileSync(
        path.join(ptySrc, "build", "Release", f),
        path.join(ptyDest, "build", "Release", f),
      );
    }
  }
  // The xattr addon, loaded by its absolute path (src/agent/xattr.ts).
  fs.mkdirSync(nativeDest, { recursive: true });
  fs.copyFileSync(xattrAddon(), path.join(nativeDest, "xattr.node"));
}

main().catch((err) => {
  console.error(`bundle-agent: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
