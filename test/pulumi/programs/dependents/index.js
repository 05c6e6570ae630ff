// A Template whose one step writes the config's `word`, a Provisioner on its
// ref and a Snapshot of the Provisioner's kept sandbox: dependents follow the build.
// With config `wiring: plain`, both take the plain IDs instead (a mistake the program warns about);
// with `wiring: apply-template` the Provisioner takes the template's ID through `.apply`, and with
// `wiring: apply-sandbox` the Snapshot takes the kept sandbox's ID through `pulumi.interpolate`.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, Snapshot, Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const wiring = config.get("wiring");
const plain = wiring === "plain";
const agent = new Template("agent", {
  name: "pl-dep",
  tags: [config.get("tag") ?? "v1"],
  build: {
    fromTemplate: "base",
    steps: [{ run: `echo ${config.require("word")} > /home/user/step.txt` }],
  },
});
const setup = new Provisioner("setup", {
  template: plain
    ? agent.templateID
    : wiring === "apply-template"
      ? agent.templateID.apply((id) => id)
      : agent.ref,
  commands: [{ run: "cp /home/user/step.txt /home/user/seen.txt" }],
  snapshot: { name: "pl-dep-ready" },
  keepSandbox: true,
});
const kept = new Snapshot("kept", {
  sandboxID: plain
    ? setup.keptSandboxID
    : wiring === "apply-sandbox"
      ? pulumi.interpolate`${setup.keptSandboxID}`
      : setup.keptSandboxRef,
  name: "pl-dep-kept",
});

exports.ref = agent.ref;
exports.keptSnapshotID = kept.snapshotID;
