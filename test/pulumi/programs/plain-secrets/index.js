// A Secret and a Provisioner whose sensitive inputs (the secret's value, the
// sandbox's envs) are plain strings from plain stack config, never wrapped in
// pulumi.secret(): the resources themselves must keep them secret in state.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, Secret } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();

const secret = new Secret("plain-sec", {
  name: "plain-secret-key",
  value: config.require("secretValue"),
});
const setup = new Provisioner("plain-env", {
  template: "base",
  envs: { PLAIN_TOKEN: config.require("envValue") },
  // The sandbox received the value: its digest (not the value) is compared.
  commands: [
    {
      run: `test "$(printf %s "$PLAIN_TOKEN" | sha256sum | cut -d' ' -f1)" = ${config.require("envDigest")}`,
    },
  ],
});

exports.secretID = secret.secretID;
exports.commandsRun = setup.commandsRun;
