/**
 * Every resource and data source refuses a key it does not know, naming it
 * and the nearest known key, through the descriptors' check that Pulumi's
 * check, Terraform's validate and the CDK's validation all run.
 */
import { checkWithSchema } from "../../src/resources/core/check";
import { nearestKey } from "../../src/resources/core/unknown-keys";
import {
  dataSourceDescriptors,
  resourceDescriptor,
  resourceDescriptors,
} from "../../src/resources/registry";
import { check as pulumiCheck } from "../../src/pulumi/provider-runtime";

function failuresOf(typeName: string, inputs: Record<string, unknown>): Map<string, string> {
  const { failures } = resourceDescriptor(typeName).lifecycle.check(inputs);
  return new Map(failures.map((f) => [f.property, f.reason]));
}

describe("unknown keys", () => {
  it.each(resourceDescriptors.map((d) => [d.typeName]))(
    "%s refuses a key it does not know, listing the known ones",
    (typeName) => {
      const reason = failuresOf(typeName, { notAField: 1 }).get("notAField");
      expect(reason).toMatch(/^unknown key "notAField" \(got a number\)/);
      const known = Object.keys(resourceDescriptor(typeName).args.shape);
      expect(reason).toContain(`Known keys: ${[...known].sort().join(", ")}`);
    },
  );

  it.each(dataSourceDescriptors.map((d) => [d.typeName, d]))(
    "data source %s refuses a key it does not know",
    (_name, descriptor) => {
      const { failures } = checkWithSchema(descriptor.args, { notAField: true });
      expect(failures).toContainEqual({
        property: "notAField",
        reason: expect.stringMatching(/^unknown key "notAField" \(got a boolean\)/),
      });
    },
  );

  it.each([
    ["Provisioner", { template: "base", comands: [] }, "comands", "commands"],
    ["Provisioner", { template: "base", timeout: 5 }, "timeout", "sandboxTimeoutSeconds"],
    [
      "Provisioner",
      { template: "base", commands: [{ run: "true", timeout: 5 }] },
      "commands.0.timeout",
      "timeoutSeconds",
    ],
    ["Provisioner", { sandbox_id: "iabc" }, "sandbox_id", "sandboxID"],
    [
      "Provisioner",
      { template: "base", files: [{ source: "a", dest: "/b" }] },
      "files.0.dest",
      "destination",
    ],
    ["Template", { name: "t", build: { fromImage: "x", step: [] } }, "build.step", "steps"],
    ["Template", { name: "t", build: { fromImage: "x" }, cpu: 2 }, "cpu", "cpuCount"],
    ["Template", { name: "t", build: { fromImage: "x" }, memoryMb: 512 }, "memoryMb", "memoryMB"],
  ])("%s: %j names %s and suggests %s", (typeName, inputs, property, suggestion) => {
    const reason = failuresOf(typeName, inputs).get(property);
    expect(reason).toContain(`did you mean "${suggestion}"?`);
  });

  it("suggests nothing when no known key is close", () => {
    const reason = failuresOf("Provisioner", { template: "base", zzzzzz: 1 }).get("zzzzzz");
    expect(reason).toBeDefined();
    expect(reason).not.toContain("did you mean");
    expect(nearestKey("x", ["template", "files"])).toBeUndefined();
  });

  it("never shows the value given to an unknown key (a misspelt env may hold secrets)", () => {
    const reason = failuresOf("Provisioner", {
      template: "base",
      env: { TOKEN: "s3cret-value" },
    }).get("env");
    expect(reason).toContain('did you mean "envs"?');
    expect(reason).toContain("(got an object)");
    expect(reason).not.toContain("s3cret-value");
  });

  it("reaches Pulumi's check with the path as a program writes it", () => {
    const result = pulumiCheck("Provisioner", {
      template: "base",
      commands: [{ run: "true", timeout: 5 }],
    });
    expect(result.failures).toEqual([
      {
        property: "commands[0].timeout",
        reason: expect.stringContaining('did you mean "timeoutSeconds"?'),
      },
    ]);
  });
});
