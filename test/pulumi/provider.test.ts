import * as pulumi from "@pulumi/pulumi";
import { createDynamicProvider } from "../../src/pulumi/provider";

async function serialized(typeName: string): Promise<string> {
  const provider = createDynamicProvider(typeName);
  const result = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
  return result.text;
}

describe("createDynamicProvider()", () => {
  it("serializes to a self-contained closure that loads the package by name", async () => {
    const text = await serialized("Template");
    expect(text).toContain('require("sandbox-iac/pulumi")');
    expect(text).toContain('"Template"');
    // Nothing of our modules is dragged in by value: no lifecycles, no zod, no clients.
    expect(text).not.toMatch(/zod|templateLifecycle|createControlClient|resolveConfig/);
    expect(text.length).toBeLessThan(8_000);
  });

  it("keeps credentials from configure on the live object only", async () => {
    const provider = createDynamicProvider("SandboxReader");
    const values: Record<string, string> = {
      "sandbox-iac:apiKey": "e2b_0123456789abcdef",
      "sandbox-iac:apiUrl": "http://127.0.0.1:1",
    };
    const pending = provider.configure?.({
      config: { get: (k: string) => values[k], require: (k: string) => values[k] ?? "" },
    });
    // Set before configure's promise settles: concurrent first calls must see it.
    expect(provider.settings).toEqual({
      apiKey: "e2b_0123456789abcdef",
      apiUrl: "http://127.0.0.1:1",
      sandboxUrl: undefined,
      domain: undefined,
    });
    await pending;
    const text = (
      await pulumi.runtime.serializeFunction(() => createDynamicProvider("SandboxReader"), {
        allowSecrets: true,
      })
    ).text;
    expect(text).not.toContain("e2b_0123456789abcdef");
  });
});
