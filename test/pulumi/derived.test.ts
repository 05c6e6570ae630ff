/**
 * What the Pulumi adapter derives from the registry of descriptors instead of
 * restating it: the declared outputs, the secrets and the replacement order.
 */
import { declaredOptions, declaredProps } from "../../src/pulumi/outputs";
import { outputNames, resourceDescriptors } from "../../src/resources/registry";

describe("Pulumi options and props derived from the descriptors", () => {
  it.each(resourceDescriptors.map((d) => [d.typeName, d] as const))(
    "%s declares every output of its descriptor beside the inputs",
    (typeName, d) => {
      const props = declaredProps(typeName, { given: "kept" });
      expect(props).toMatchObject({ given: "kept" });
      for (const name of outputNames(d)) {
        expect(name in props).toBe(true);
        expect(props[name]).toBeUndefined();
      }
    },
  );

  it("marks the sandbox access token and the Provisioner's envs secret, keeping the user's own", () => {
    expect(declaredOptions("SandboxReader", {}, undefined).additionalSecretOutputs).toEqual([
      "envdAccessToken",
    ]);
    expect(
      declaredOptions("Provisioner", {}, { additionalSecretOutputs: ["commands"] })
        .additionalSecretOutputs,
    ).toEqual(["commands", "envs"]);
    expect(declaredOptions("Template", {}, undefined).additionalSecretOutputs).toBeUndefined();
  });

  it("deletes first where the replacement constraint says so, unless the user chose", () => {
    expect(declaredOptions("Snapshot", {}, undefined).deleteBeforeReplace).toBe(true);
    expect(declaredOptions("Template", {}, undefined).deleteBeforeReplace).toBeUndefined();
    expect(
      declaredOptions("Provisioner", { snapshot: { name: "x" } }, undefined).deleteBeforeReplace,
    ).toBe(true);
    expect(
      declaredOptions("Provisioner", { template: "base" }, undefined).deleteBeforeReplace,
    ).toBeUndefined();
    expect(
      declaredOptions("Snapshot", {}, { deleteBeforeReplace: false }).deleteBeforeReplace,
    ).toBe(false);
  });
});
