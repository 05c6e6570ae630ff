// A Template whose build logs a line, and a Provisioner of it whose setup
// commands print on stdout and stderr: what `pulumi up` shows of the provider.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Provisioner, Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const tpl = new Template("tpl", {
  name: config.require("name"),
  build: { fromTemplate: "base", steps: [{ run: "echo built-by-step > /tmp/built.txt" }] },
});
const setup = new Provisioner("setup", {
  template: tpl.templateID,
  commands: [
    { run: "echo hello-from-setup; echo warned-on-stderr >&2" },
    { run: config.get("second") ?? "cat /tmp/built.txt" },
  ],
});
exports.templateID = tpl.templateID;
exports.commandsRun = setup.commandsRun;
