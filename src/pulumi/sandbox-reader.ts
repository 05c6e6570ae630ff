/**
 * The `SandboxReader` dynamic resource: the fields of an existing sandbox as
 * outputs. See `src/resources/sandbox-reader/sandbox-reader.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type {
  SandboxReaderArgs as SandboxReaderInputArgs,
  SandboxReaderOutputs,
} from "../resources/sandbox-reader/sandbox-reader.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link SandboxReader}. */
export type SandboxReaderArgs = ResourceArgs<SandboxReaderInputArgs>;

const provider = createDynamicProvider("SandboxReader");

/**
 * Reads an existing sandbox. It never changes the sandbox, and deleting it
 * deletes nothing. `envdAccessToken` is a secret output.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SandboxReader extends pulumi.dynamic.Resource {
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

/**
 * The properties of {@link SandboxReader}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/sandbox-reader/sandbox-reader.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface SandboxReader extends OutputProperties<SandboxReaderOutputs> {}
