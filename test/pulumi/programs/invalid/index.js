// Inputs wrong in several places at once, for the check test.
"use strict";
const { Template, SandboxReader, Provisioner } = require("sandbox-iac/pulumi");

new Template("bad", {
  name: "Not A/Valid/Name",
  cpuCount: 0,
  memoryMB: 64,
  build: { fromTemplate: "base", fromImage: "ubuntu:22.04", steps: [{}] },
});
new SandboxReader("bad-reader", { sandboxID: "NOT VALID", includeMetrics: "yes" });
// Misspelt keys: each is refused with the key it was meant to be.
new Provisioner("bad-keys", { template: "base", comands: [{ run: "true" }], timeout: 60 });
// Misspelt keys inside a list element and a nested object.
new Provisioner("bad-nested-keys", {
  template: "base",
  commands: [{ run: "echo hi", timeoutSecs: 30 }],
});
new Template("bad-build-key", { name: "bad-build-key", build: { formTemplate: "base" } });
// run: a line or a list of lines; anything else is refused with its path.
new Provisioner("bad-run", {
  template: "base",
  commands: [{ run: ["echo a", "echo b"] }, { run: "echo c" }, { run: 42 }],
});
