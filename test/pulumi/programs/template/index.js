// A Template driven by stack config, for the scenario tests.
"use strict";
const pulumi = require("@pulumi/pulumi");
const { Template } = require("sandbox-iac/pulumi");

const config = new pulumi.Config();
const steps = [
  { copy: { src: "files", dest: "/opt/app" } },
  { run: config.get("run") ?? "test -f /opt/app/hello.txt" },
  { env: { GREETING: "hello" } },
  { workdir: "/opt/app" },
];
const args = {
  name: config.require("name"),
  build: { fromTemplate: "base", steps },
};
const tags = config.getObject("tags");
if (tags) args.tags = tags;
const memoryMB = config.getNumber("memoryMB");
if (memoryMB) args.memoryMB = memoryMB;

const tpl = new Template("tpl", args);
exports.templateID = tpl.templateID;
exports.buildID = tpl.buildID;
exports.names = tpl.names;
exports.currentTags = tpl.currentTags;
exports.filesHashes = tpl.filesHashes;
