#!/usr/bin/env node
/**
 * Compiles the service's host spawner (src/local/runtime/host-spawner.c) to
 * `dist/native/host-spawner`, static, with the C compiler the agent's
 * spawner needs too (scripts/bundle-agent.js). It is required: the service
 * starts every host command (ip, nft, the namespace holders, each sandbox's
 * launch chain) through it (src/local/runtime/host-spawner.ts).
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const root = path.resolve(__dirname, "..");
const src = path.join(root, "src", "local", "runtime", "host-spawner.c");
const out = path.join(root, "dist", "native", "host-spawner");
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.rmSync(out, { force: true });
const cc = process.env.CC || "cc";
const r = spawnSync(cc, ["-O2", "-Wall", "-Werror", "-static", "-o", out, src], {
  stdio: ["ignore", "inherit", "inherit"],
});
if (r.status !== 0) {
  console.error(
    `${cc} could not build ${src} (${r.error?.message ?? `exit ${r.status}`}): ` +
      "the service starts its host commands through it; install a C compiler and the static libc (e.g. Debian's build-essential) and build again",
  );
  process.exit(1);
}
