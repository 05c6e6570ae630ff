/**
 * The `SandboxReader` dynamic resource: the fields of an existing sandbox as
 * outputs. See `src/resources/sandbox-reader/sandbox-reader.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  SandboxReaderArgs as SandboxReaderInputArgs,
  SandboxReaderMetrics,
} from "../resources/sandbox-reader/sandbox-reader.args";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link SandboxReader}. */
export type SandboxReaderArgs = ResourceArgs<SandboxReaderInputArgs>;

const provider = createDynamicProvider("SandboxReader");

/**
 * Reads an existing sandbox. It never changes the sandbox, and deleting it
 * deletes nothing. `envdAccessToken` is a secret output.
 */
export class SandboxReader extends pulumi.dynamic.Resource {
  declare readonly sandboxID: pulumi.Output<string>;
  declare readonly includeMetrics: pulumi.Output<boolean | undefined>;
  declare readonly templateID: pulumi.Output<string>;
  declare readonly alias: pulumi.Output<string | undefined>;
  declare readonly clientID: pulumi.Output<string>;
  declare readonly startedAt: pulumi.Output<string>;
  declare readonly endAt: pulumi.Output<string>;
  declare readonly envdVersion: pulumi.Output<string>;
  declare readonly cpuCount: pulumi.Output<number>;
  declare readonly memoryMB: pulumi.Output<number>;
  declare readonly diskSizeMB: pulumi.Output<number>;
  /** `running` or `paused`. */
  declare readonly state: pulumi.Output<string>;
  declare readonly metadata: pulumi.Output<Record<string, string>>;
  /** Token of the sandbox interface (secret); empty when the sandbox has none. */
  declare readonly envdAccessToken: pulumi.Output<string>;
  declare readonly domain: pulumi.Output<string | null>;
  declare readonly volumeMounts: pulumi.Output<Array<{ name: string; path: string }>>;
  /** The latest metric sample, with `includeMetrics`. */
  declare readonly metrics: pulumi.Output<SandboxReaderMetrics | undefined>;

  constructor(name: string, args: SandboxReaderArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("SandboxReader", args),
      declaredOptions("SandboxReader", args, opts),
      TYPE_MODULE,
      "SandboxReader",
    );
  }
}
