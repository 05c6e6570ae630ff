/**
 * What the Pulumi adapter derives from the registry of descriptors instead of
 * restating it: the declared outputs, the secrets and the replacement order.
 */
import * as pulumi from "@pulumi/pulumi";
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

  it("makes every input the descriptors mark sensitive a secret, even given as a plain value", async () => {
    for (const d of resourceDescriptors) {
      const top = d.sensitiveInputs.filter((name) => !name.includes("."));
      const args = Object.fromEntries(top.map((name) => [name, "plain"]));
      const props = declaredProps(d.typeName, args);
      for (const name of top) {
        const value = props[name] as pulumi.Output<unknown>;
        expect(pulumi.Output.isInstance(value)).toBe(true);
        expect(await pulumi.isSecret(value)).toBe(true);
      }
    }
    // The ones this covers today, so the loop above cannot pass empty.
    expect(
      resourceDescriptors.flatMap((d) => d.sensitiveInputs.map((n) => `${d.typeName}.${n}`)),
    ).toEqual(expect.arrayContaining(["Provisioner.envs", "Secret.value"]));
  });

  it("makes a nested sensitive input (the registry password) a secret, the rest of its object in clear", async () => {
    const props = declaredProps("Template", {
      name: "t",
      build: { fromImage: "app:1", fromImageRegistry: { username: "me", password: "plain" } },
    });
    // What the engine receives: the build in clear, with a secret inside it.
    const build = props["build"] as pulumi.Output<{
      fromImage: string;
      fromImageRegistry: { username: string; password: unknown };
    }>;
    expect(await pulumi.isSecret(build)).toBe(false);
    const value = await new Promise<{
      fromImage: string;
      fromImageRegistry: { username: string; password: unknown };
    }>((resolve) => build.apply(resolve));
    expect(value.fromImage).toBe("app:1");
    expect(value.fromImageRegistry.username).toBe("me");
    const password = value.fromImageRegistry.password as pulumi.Output<string>;
    expect(pulumi.Output.isInstance(password)).toBe(true);
    expect(await pulumi.isSecret(password)).toBe(true);
  });

  it("leaves a sensitive input the program left out absent", () => {
    const props = declaredProps("Provisioner", { template: "base" });
    expect(props["envs"]).toBeUndefined();
  });

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
