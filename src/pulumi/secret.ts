/**
 * The `Secret` dynamic resource: a named value stored by the service; the
 * value is a Pulumi secret. See `src/resources/secret/secret.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { SecretArgs as SecretInputArgs, SecretOutputs } from "../resources/secret/secret.args";
import { TYPE_MODULE } from "./constants";
import type { OutputProperties, ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Secret}. */
export type SecretArgs = ResourceArgs<SecretInputArgs>;

const provider = createDynamicProvider("Secret");

/** A stored secret. A value or metadata change stores a new version in place. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Secret extends pulumi.dynamic.Resource {
  constructor(name: string, args: SecretArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      declaredProps("Secret", args),
      declaredOptions("Secret", args, opts),
      TYPE_MODULE,
      "Secret",
    );
  }
}

/**
 * The properties of {@link Secret}: every input and output, typed and described
 * by the core's descriptor (see `src/resources/secret/secret.args.ts`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface Secret extends OutputProperties<SecretOutputs> {}
