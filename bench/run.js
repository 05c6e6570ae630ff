// npm run bench: the Provisioner benchmark, then (with BENCH_ALL=1) the local
// service benchmark that `npm run bench:local` also runs. Each runs in its own
// process so one's service and memory do not skew the other's figures.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const suites = ["provisioner.js"];
if (process.env.BENCH_ALL === "1") suites.push("local.js");

for (const suite of suites) {
  const r = spawnSync(process.execPath, [path.join(__dirname, suite)], { stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`bench/${suite} failed (${r.signal ?? `exit ${r.status}`})`);
    process.exit(r.status ?? 1);
  }
}
