/**
 * The `Secret` dynamic resource: a named value stored by the service; the
 * value is a Pulumi secret. See `src/resources/secret/secret.md`.
 *
 * @module
 */
import type { SecretArgs as SecretInputArgs } from "../resources/secret/secret.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link Secret}. */
export type SecretArgs = ResourceArgs<SecretInputArgs>;

/** A stored secret. A value or metadata change stores a new version in place. */
export class Secret extends dynamicResourceClass("Secret") {}
