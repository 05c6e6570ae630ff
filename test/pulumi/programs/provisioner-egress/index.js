// A Provisioner whose setup step may reach only its package mirror, with a
// Secret injected at the egress edge by a network.rules entry and an
// egressProxy (the shape secret.md shows), for the egress scenario test. The
// proxy password is given as plain config: the resource makes it a secret.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, Secret } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const mirrorKey = new Secret("mirror", {
  name: "mirror-key",
  value: config.requireSecret("mirrorKey"),
});
const setup = new Provisioner(
  "setup",
  {
    template: "base",
    files: [{ source: "probe.js", destination: "/home/user/probe.js" }],
    commands: [{ run: `/.sandbox-iac/node /home/user/probe.js ${config.require("headerSha")}` }],
    network: {
      allowOut: [config.require("mirror")],
      denyOut: ["0.0.0.0/0"],
      rules: [
        {
          domain: config.require("mirror"),
          headers: { Authorization: "Bearer ${e2b.secrets.mirror-key}" },
        },
      ],
      egressProxy: {
        address: config.require("proxyAddress"),
        username: config.require("proxyUsername"),
        password: config.require("proxyPassword"),
      },
    },
  },
  { dependsOn: [mirrorKey] },
);

exports.commandsRun = setup.commandsRun;
exports.network = setup.network;
