/**
 * The resource RPCs that touch the service: apply, read, import (and
 * upgrade, which reshapes stored state), each a translation between
 * Terraform's objects and one descriptor's lifecycle.
 *
 * @module
 */
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import {
  type ApplyResourceChange_Request,
  ApplyResourceChange_ResponseSchema,
  type ImportResourceState_Request,
  ImportResourceState_ResponseSchema,
  type ReadResource_Request,
  ReadResource_ResponseSchema,
  type UpgradeResourceState_Request,
  UpgradeResourceState_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import { resourceLabel } from "../../resources/core/log-label";
import type { CatalogResource } from "../schema/catalog";
import { ID_ATTRIBUTE } from "../schema/blocks";
import { blockCodec } from "../values/block-codec";
import { decodePlannedChange } from "../values/planned-private";
import { errorDiagnostic, failureDiagnostic } from "./diagnostics";
import type { ProviderRuntime } from "./runtime";

type Init<S extends DescMessage> = MessageInitShape<S>;

/**
 * ApplyResourceChange: create, update or delete. A failed create stores
 * nothing (the core's create is all-or-nothing); a failed update or delete
 * keeps the prior state. An update reaches the service only when the plan's
 * change says so (`plannedPrivate`, see values/planned-private.ts).
 */
export async function applyResource(
  entry: CatalogResource,
  req: ApplyResourceChange_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<Init<typeof ApplyResourceChange_ResponseSchema>> {
  const { descriptor, block, typeName } = entry;
  const codec = blockCodec(block);
  const config = codec.config(req.config);
  const prior = codec.read(req.priorState);
  const planned = codec.read(req.plannedState);
  const lifecycle = descriptor.lifecycle;
  const described = planned ?? prior;
  const ctx = runtime.context(signal, resourceLabel(typeName, described?.outputs ?? {}, prior?.id));
  try {
    if (planned === null) {
      if (prior !== null) await lifecycle.delete(prior.id, prior.outputs, ctx);
      return { newState: codec.encode(null) };
    }
    const news = config?.inputs ?? {};
    if (prior === null) {
      const { id, outputs } = await lifecycle.create(news, ctx);
      return { newState: codec.encode(codec.withOutputs(planned.terraform, outputs, id)) };
    }
    const { changes } = decodePlannedChange(req.plannedPrivate, typeName);
    const outputs = changes
      ? await lifecycle.update(prior.id, prior.outputs, news, ctx)
      : prior.outputs;
    return { newState: codec.encode(codec.withOutputs(planned.terraform, outputs, prior.id)) };
  } catch (err) {
    const verb = planned === null ? "delete" : prior === null ? "create" : "update";
    return {
      newState: codec.encode(prior?.terraform ?? null),
      diagnostics: [failureDiagnostic(`${typeName} ${verb}`, err, ctx.logTail)],
    };
  }
}

/** ReadResource: refreshes the outputs; a resource gone from the service returns null (plan re-creates it). */
export async function readResource(
  entry: CatalogResource,
  req: ReadResource_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<Init<typeof ReadResource_ResponseSchema>> {
  const codec = blockCodec(entry.block);
  const current = codec.read(req.currentState);
  if (current === null) return { newState: codec.encode(null) };
  const { descriptor, typeName } = entry;
  const ctx = runtime.context(signal, resourceLabel(typeName, current.outputs, current.id));
  try {
    const found = await descriptor.lifecycle.read(current.id, current.outputs, ctx);
    if (!found) return { newState: codec.encode(null) };
    return {
      newState: codec.encode(codec.withOutputs(current.terraform, found.outputs, found.id)),
      private: req.private,
    };
  } catch (err) {
    return {
      newState: codec.encode(current.terraform),
      diagnostics: [failureDiagnostic(`${typeName} read`, err, ctx.logTail)],
    };
  }
}

/** ImportResourceState: reads the object from its id alone. */
export async function importResource(
  entry: CatalogResource,
  req: ImportResourceState_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<Init<typeof ImportResourceState_ResponseSchema>> {
  const { descriptor, block, typeName } = entry;
  const ctx = runtime.context(signal, resourceLabel(typeName, {}, req.id));
  try {
    const found = await descriptor.lifecycle.read(req.id, undefined, ctx);
    if (!found) {
      return {
        diagnostics: [
          errorDiagnostic(
            `Cannot import ${typeName}`,
            `no ${descriptor.typeName} with id ${JSON.stringify(req.id)} exists in the service: ` +
              "check the id (terraform import <address> <id>)",
          ),
        ],
      };
    }
    const codec = blockCodec(block);
    const state = codec.fromCore({ ...found.outputs, [ID_ATTRIBUTE]: found.id });
    return { importedResources: [{ typeName, state: codec.encode(state) }] };
  } catch (err) {
    return { diagnostics: [failureDiagnostic(`${typeName} import`, err, ctx.logTail)] };
  }
}

/**
 * UpgradeResourceState: the stored JSON reshaped to the current schema
 * (attributes added since are null, removed ones dropped, dynamic values with
 * their stored types).
 */
export function upgradeResource(
  entry: CatalogResource,
  req: UpgradeResourceState_Request,
): Init<typeof UpgradeResourceState_ResponseSchema> {
  const { descriptor, block, typeName } = entry;
  if (req.version > BigInt(descriptor.version)) {
    return {
      diagnostics: [
        errorDiagnostic(
          `Cannot read the state of ${typeName}`,
          `the state has schema version ${req.version}, newer than this provider's ` +
            `${descriptor.version}: upgrade sandbox-iac (sandbox-iac terraform install)`,
        ),
      ],
    };
  }
  const codec = blockCodec(block);
  return { upgradedState: codec.encode(codec.upgrade(req.rawState?.json ?? new Uint8Array())) };
}
