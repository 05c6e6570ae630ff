// A template from a private registry's image, its password a plain string
// from plain stack config (never wrapped in pulumi.secret()): the resource
// itself must keep it secret in state; and one from a Dockerfile whose COPY
// sources are in the program's app/ directory.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();

const img = new Template("from-image", {
  name: "pulumi-from-image",
  minFreeDiskMb: 64,
  build: {
    fromImage: config.require("image"),
    fromImageRegistry: {
      username: config.require("registryUser"),
      password: config.require("registryPassword"),
    },
    steps: [{ run: config.require("step") }],
  },
});

// One build at a time: the machine running the tests is shared.
const df = new Template(
  "from-dockerfile",
  {
    name: "pulumi-from-dockerfile",
    build: { dockerfile: config.require("dockerfile"), context: "app" },
  },
  { dependsOn: [img] },
);

exports.imageDigest = img.imageDigest;
exports.dockerfileFilesHashes = df.filesHashes;
exports.buildStatus = img.buildStatus;
