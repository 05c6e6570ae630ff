#!/usr/bin/env node
/**
 * Bundles the in-sandbox agent (src/agent/main.ts) into dist/agent/agent.js:
 * one CommonJS file for Node 20 with every dependency inlined, except the
 * native addon node-pty, which is copied next to it so that
 * `require("node-pty")` resolves inside the sandbox.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const outDir = path.join(root, "dist", "agent");
const ptySrc = path.join(root, "node_modules", "node-pty");
const ptyDest = path.join(outDir, "node_modules", "node-pty");

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
}

main().catch((err) => {
  console.error(`bundle-agent: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
