// A Snapshot and a SandboxReader of a sandbox the test created, for the scenario tests.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { SandboxReader, Snapshot } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const sandboxID = config.require("sandboxID");

const reader = new SandboxReader("reader", {
  sandboxID,
  includeMetrics: config.getBoolean("includeMetrics") ?? false,
});
const snapshot = new Snapshot("snap", { sandboxID, name: config.require("snapshotName") });

exports.state = reader.state;
exports.templateID = reader.templateID;
exports.envdAccessToken = reader.envdAccessToken;
exports.snapshotID = snapshot.snapshotID;
exports.snapshotNames = snapshot.names;
