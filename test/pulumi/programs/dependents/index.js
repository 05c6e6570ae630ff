// A Template whose one step writes the config's `word`, a Provisioner on its
// ref and a Snapshot of the Provisioner's kept sandbox: dependents follow the build.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, Snapshot, Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const agent = new Template("agent", {
  name: "pl-dep",
  tags: [config.get("tag") ?? "v1"],
  build: {
    fromTemplate: "base",
    steps: [{ run: `echo ${config.require("word")} > /home/user/step.txt` }],
  },
});
const setup = new Provisioner("setup", {
  template: agent.ref,
  commands: [{ run: "cp /home/user/step.txt /home/user/seen.txt" }],
  snapshot: { name: "pl-dep-ready" },
  keepSandbox: true,
});
const kept = new Snapshot("kept", { sandboxID: setup.keptSandboxRef, name: "pl-dep-kept" });

exports.ref = agent.ref;
exports.keptSnapshotID = kept.snapshotID;
