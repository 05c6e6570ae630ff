// A Volume seeded from a local file, a Provisioner whose sandbox mounts it and
// writes into it, a reader of that (kept) sandbox, and a Secret, for the
// scenario tests.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, SandboxReader, Secret, Volume } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();

const volume = new Volume("vol", {
  name: config.require("volumeName"),
  files: [{ source: "seed.txt", destination: "/seed/seed.txt", mode: 0o640 }],
});
const writer = new Provisioner("writer", {
  template: "base",
  keepSandbox: true,
  volumeMounts: [{ name: volume.name, path: "/mnt/vol" }],
  commands: [{ run: "cat /mnt/vol/seed/seed.txt > /mnt/vol/copied-by-provisioner.txt" }],
});
const reader = new SandboxReader("reader", { sandboxID: writer.keptSandboxID });
const secret = new Secret("sec", {
  name: "scenario-key",
  value: config.requireSecret("secretValue"),
  metadata: { owner: "scenario" },
});

exports.volumeID = volume.volumeID;
exports.fileDigest = volume.fileDigest;
exports.mounts = reader.volumeMounts;
exports.secretID = secret.secretID;
exports.secretVersion = secret.currentVersion;
