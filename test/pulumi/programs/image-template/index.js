// A template from a private registry's image, its password a plain string
// from plain stack config (never wrapped in pulumi.secret()): the resource
// itself must keep it secret in state.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();

const img = new Template("from-image", {
  name: "pulumi-from-image",
  build: {
    fromImage: config.require("image"),
    fromImageRegistry: {
      username: config.require("registryUser"),
      password: config.require("registryPassword"),
    },
    steps: [{ run: config.require("step") }],
  },
});

exports.imageDigest = img.imageDigest;
exports.buildStatus = img.buildStatus;
