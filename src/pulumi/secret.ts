/**
 * The `Secret` dynamic resource: a named value stored by the service; the
 * value is a Pulumi secret. See `src/resources/secret/secret.md`.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import type { SecretArgs as SecretInputArgs } from "../resources/secret/secret.args";
import { TYPE_MODULE } from "./constants";
import type { ResourceArgs } from "./inputs";
import { declaredOptions, declaredProps } from "./outputs";
import { createDynamicProvider } from "./provider";

/** Args of {@link Secret}. */
export type SecretArgs = ResourceArgs<SecretInputArgs>;

const provider = createDynamicProvider("Secret");

/** A stored secret. A value or metadata change stores a new version in place. */
export class Secret extends pulumi.dynamic.Resource {
  /** The secret's name. */
  declare readonly name: pulumi.Output<string>;
  /** The value (a Pulumi secret). */
  declare readonly value: pulumi.Output<string>;
  /** The metadata. */
  declare readonly metadata: pulumi.Output<Record<string, string> | undefined>;
  /** The secret's ID. */
  declare readonly secretID: pulumi.Output<string>;
  /** The version the service serves. */
  declare readonly currentVersion: pulumi.Output<number>;
  /** Creation time (RFC 3339). */
  declare readonly createdAt: pulumi.Output<string>;
  /** Last change (RFC 3339). */
  declare readonly updatedAt: pulumi.Output<string>;

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
