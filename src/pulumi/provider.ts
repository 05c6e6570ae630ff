/**
 * The one dynamic-provider factory, generic over the resource type. The object
 * it returns is SERIALIZED into the Pulumi state by closure serialization, so
 * it captures nothing but its type name: no client, no config value, no token,
 * no imported module. At call time each method `require()`s this package by
 * name (resolved from the plugin's working directory, the program directory)
 * and hands over to `provider-runtime.ts`. Credentials come from `configure()`
 * (stack config) or the environment, and are kept on the live object only.
 *
 * @module
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ProviderSettings } from "./settings";

/** A dynamic provider of this package, with the settings `configure()` stored. */
export interface SandboxIacProvider extends pulumi.dynamic.ResourceProvider {
  /** Set by `configure()`; absent before it (then the environment is used). */
  settings?: ProviderSettings;
}

/**
 * The dynamic provider of resource type `typeName` (a key of the runtime's
 * lifecycle table). Preview only ever reaches `check` and `diff`, which never
 * call the service.
 */
export function createDynamicProvider(typeName: string): SandboxIacProvider {
  // Everything below runs in the plugin from its serialized text. The module is
  // named by a literal, not a shared constant: a captured import would drag that
  // module into the state by value.
  return {
    async configure(this: SandboxIacProvider, req: pulumi.dynamic.ConfigureRequest) {
      // Assigned synchronously, before any await: the plugin caches the provider
      // before configure ends, and concurrent first calls must see the settings.
      this.settings = {
        apiKey: req.config.get("sandbox-iac:apiKey"),
        apiUrl: req.config.get("sandbox-iac:apiUrl"),
        sandboxUrl: req.config.get("sandbox-iac:sandboxUrl"),
        domain: req.config.get("sandbox-iac:domain"),
      };
    },
    async check(_olds: unknown, news: Record<string, unknown>) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require("sandbox-iac/pulumi").providerRuntime.check(typeName, news);
    },
    async diff(_id: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require("sandbox-iac/pulumi").providerRuntime.diff(typeName, olds, news);
    },
    async create(this: SandboxIacProvider, inputs: Record<string, unknown>) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require("sandbox-iac/pulumi").providerRuntime.create(typeName, this.settings, inputs);
    },
    async read(this: SandboxIacProvider, id: string, props: Record<string, unknown>) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require("sandbox-iac/pulumi").providerRuntime.read(typeName, this.settings, id, props);
    },
    async update(
      this: SandboxIacProvider,
      id: string,
      olds: Record<string, unknown>,
      news: Record<string, unknown>,
    ) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require("sandbox-iac/pulumi").providerRuntime.update(
        typeName,
        this.settings,
        id,
        olds,
        news,
      );
    },
    async delete(this: SandboxIacProvider, id: string, props: Record<string, unknown>) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      await require("sandbox-iac/pulumi").providerRuntime.remove(
        typeName,
        this.settings,
        id,
        props,
      );
    },
  };
}
