// A Volume seeded from a local file and a Secret, for the scenario tests.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Secret, Volume } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();

const volume = new Volume("vol", {
  name: config.require("volumeName"),
  files: [{ source: "seed.txt", destination: "/seed/seed.txt", mode: 0o640 }],
});
const secret = new Secret("sec", {
  name: "scenario-key",
  value: config.requireSecret("secretValue"),
  metadata: { owner: "scenario" },
});

exports.volumeID = volume.volumeID;
exports.fileDigest = volume.fileDigest;
exports.secretID = secret.secretID;
exports.secretVersion = secret.currentVersion;
