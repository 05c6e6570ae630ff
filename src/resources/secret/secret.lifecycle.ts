/**
 * The Secret resource: a named value stored by the service, updated in place
 * (a new version) when the value or metadata changes. The service never
 * answers the value, so read keeps the stored one and an import has none
 * (the first apply after an import stores the configured value).
 *
 * @module
 */
import { createControlClient } from "../../client/control";
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import { unlessNotFound } from "../core/not-found";
import {
  secretArgsSchema,
  secretChangeRules,
  secretSensitiveInputs,
  type SecretInputs,
  type SecretOutputs,
} from "./secret.args";

type SecretInfo = Awaited<ReturnType<ReturnType<typeof createControlClient>["getSecret"]>>;

function clientOf(ctx: ResourceContext) {
  return {
    client: createControlClient({ config: ctx.config, log: ctx.log }),
    options: ctx.signal ? { signal: ctx.signal } : {},
  };
}

function outputsOf(inputs: SecretInputs, info: SecretInfo): SecretOutputs {
  return {
    ...inputs,
    secretID: info.secretID,
    currentVersion: info.currentVersion,
    createdAt: info.createdAt,
    updatedAt: info.updatedAt,
  };
}

/** The Secret lifecycle. */
export const secretLifecycle: ResourceLifecycle<SecretInputs, SecretOutputs> = {
  typeName: "Secret",
  check(news, options) {
    return checkWithSchema(secretArgsSchema, news, options, secretSensitiveInputs);
  },
  diff(olds, news, options) {
    const lower = (i: Partial<SecretInputs>) =>
      typeof i.name === "string" ? { ...i, name: i.name.toLowerCase() } : i;
    return diffByRules(lower(olds), lower(news) as SecretInputs, secretChangeRules, options);
  },
  async create(inputs, ctx) {
    const { client, options } = clientOf(ctx);
    const info = await client.createSecret(inputs.name, inputs.value, inputs.metadata, options);
    ctx.log(`secret ${info.name} created (${info.secretID})`);
    return { id: info.secretID, outputs: outputsOf(inputs, info) };
  },
  async read(id, olds, ctx) {
    const { client, options } = clientOf(ctx);
    const info = await unlessNotFound(client.getSecret(id, options), undefined);
    if (!info) return undefined;
    // The value is never answered: keep the stored one (none after an import).
    // Metadata is reported as the service has it, so an out-of-band change shows as drift.
    const metadata =
      olds?.metadata !== undefined || Object.keys(info.metadata).length > 0
        ? info.metadata
        : undefined;
    const inputs: SecretInputs = {
      name: olds?.name ?? info.name,
      value: olds?.value ?? "",
      ...(metadata ? { metadata } : {}),
    };
    return { id, outputs: outputsOf(inputs, info) };
  },
  async update(id, olds, news, ctx) {
    const { client, options } = clientOf(ctx);
    // A metadata-only change stores the same value as a new version: the API has no other way.
    const info = await client.updateSecret(id, news.value, news.metadata ?? {}, options);
    ctx.log(`secret ${info.name} updated to version ${info.currentVersion}`);
    return outputsOf(news, info);
  },
  async delete(id, _olds, ctx) {
    const { client, options } = clientOf(ctx);
    await unlessNotFound(client.deleteSecret(id, options), undefined);
  },
};
