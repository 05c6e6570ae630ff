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
import { decodeJson, encodeDynamic } from "../values/dynamic-value";
import { objectToTerraform, storedObject } from "../values/convert";
import { errorDiagnostic, failureDiagnostic } from "./diagnostics";
import type { ProviderRuntime } from "./runtime";
import {
  type TfObject,
  coreInputs,
  coreOutputs,
  decodeObject,
  stateId,
  withOutputs,
} from "./state";

type Init<S extends DescMessage> = MessageInitShape<S>;

/**
 * ApplyResourceChange: create, update or delete. A failed create stores
 * nothing (the core's create is all-or-nothing); a failed update or delete
 * keeps the prior state.
 */
export async function applyResource(
  entry: CatalogResource,
  req: ApplyResourceChange_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<Init<typeof ApplyResourceChange_ResponseSchema>> {
  const prior = decodeObject(req.priorState);
  const planned = decodeObject(req.plannedState);
  const config = decodeObject(req.config);
  const { descriptor, block, typeName } = entry;
  const lifecycle = descriptor.lifecycle;
  const described = planned ?? prior;
  const ctx = runtime.context(
    signal,
    resourceLabel(
      typeName,
      described ? coreOutputs(block, described) : {},
      prior ? stateId(prior) : undefined,
    ),
  );
  try {
    if (planned === null) {
      if (prior !== null) await lifecycle.delete(stateId(prior), coreOutputs(block, prior), ctx);
      return { newState: encodeDynamic(null) };
    }
    const news = coreInputs(block, config);
    if (prior === null) {
      const { id, outputs } = await lifecycle.create(news, ctx);
      return {
        newState: encodeDynamic(
          withOutputs(block, planned, outputs as Record<string, unknown>, id),
        ),
      };
    }
    const olds = coreOutputs(block, prior);
    const diff = await lifecycle.diff(olds, news, { baseDir: runtime.baseDir });
    const outputs = diff.changes ? await lifecycle.update(stateId(prior), olds, news, ctx) : olds;
    return {
      newState: encodeDynamic(
        withOutputs(block, planned, outputs as Record<string, unknown>, stateId(prior)),
      ),
    };
  } catch (err) {
    const verb = planned === null ? "delete" : prior === null ? "create" : "update";
    return {
      newState: encodeDynamic(prior),
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
  const current = decodeObject(req.currentState);
  if (current === null) return { newState: encodeDynamic(null) };
  const { descriptor, block, typeName } = entry;
  const ctx = runtime.context(
    signal,
    resourceLabel(typeName, coreOutputs(block, current), stateId(current)),
  );
  try {
    const found = await descriptor.lifecycle.read(
      stateId(current),
      coreOutputs(block, current),
      ctx,
    );
    if (!found) return { newState: encodeDynamic(null) };
    return {
      newState: encodeDynamic(
        withOutputs(block, current, found.outputs as Record<string, unknown>, found.id),
      ),
      private: req.private,
    };
  } catch (err) {
    return {
      newState: encodeDynamic(current),
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
    const state = objectToTerraform(block.attributes, {
      ...(found.outputs as Record<string, unknown>),
      [ID_ATTRIBUTE]: found.id,
    });
    return { importedResources: [{ typeName, state: encodeDynamic(state) }] };
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
  const raw = req.rawState?.json ? decodeJson(req.rawState.json) : null;
  if (raw === null) return { upgradedState: encodeDynamic(null) };
  return { upgradedState: encodeDynamic(storedObject(block.attributes, raw as TfObject)) };
}
