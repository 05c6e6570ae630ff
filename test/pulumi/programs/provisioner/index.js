// One Provisioner whose every input comes from the stack config object `args`,
// so the scenario tests drive each step (create, edit, triggers, replace,
// invalid inputs) with the same program.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const setup = new Provisioner("setup", config.requireObject("args"));

exports.keptSandboxID = setup.keptSandboxID;
exports.fileDigest = setup.fileDigest;
exports.snapshotID = setup.snapshotID;
exports.snapshotNames = setup.snapshotNames;
exports.commandsRun = setup.commandsRun;
exports.bytesUploaded = setup.bytesUploaded;
