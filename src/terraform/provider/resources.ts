/**
 * The resource RPCs: validate, plan, apply, read, import and upgrade, each a
 * translation between Terraform's objects and one descriptor's lifecycle.
 *
 * @module
 */
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import {
  type ApplyResourceChange_Request,
  ApplyResourceChange_ResponseSchema,
  type ImportResourceState_Request,
  ImportResourceState_ResponseSchema,
  type PlanResourceChange_Request,
  PlanResourceChange_ResponseSchema,
  type ReadResource_Request,
  ReadResource_ResponseSchema,
  type UpgradeResourceState_Request,
  UpgradeResourceState_ResponseSchema,
  type ValidateResourceConfig_Request,
  ValidateResourceConfig_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import type { CatalogResource } from "../schema/catalog";
import { ID_ATTRIBUTE } from "../schema/blocks";
import {
  UNKNOWN,
  decodeDynamic,
  decodeJson,
  encodeDynamic,
  isUnknown,
} from "../values/dynamic-value";
import { containsUnknown, objectToCore, objectToTerraform, topLevelPath } from "../values/convert";
import { errorDiagnostic, failureDiagnostic } from "./diagnostics";
import type { ProviderRuntime } from "./runtime";
import {
  type TfObject,
  computedOnlyAttributes,
  coreInputs,
  coreOutputs,
  inputAttributes,
  stateId,
  withOutputs,
} from "./state";
import { failureDiagnostics } from "./validate";

type Init<S extends DescMessage> = MessageInitShape<S>;

/** ValidateResourceConfig: `check` on the configuration, unknown values skipped. */
export function validateResource(
  entry: CatalogResource,
  req: ValidateResourceConfig_Request,
): Init<typeof ValidateResourceConfig_ResponseSchema> {
  const config = decodeDynamic(req.config) as TfObject | null;
  const result = entry.descriptor.lifecycle.check(coreInputs(entry.block, config), {
    isUnknown,
  });
  return { diagnostics: failureDiagnostics(inputAttributes(entry.block), result.failures) };
}

/** Fills plan-time outputs (content hashes of local files) into `planned` when the inputs are known. */
async function withPlanOutputs(
  entry: CatalogResource,
  planned: TfObject,
  news: Record<string, unknown>,
  baseDir: string,
): Promise<TfObject> {
  const lifecycle = entry.descriptor.lifecycle;
  if (!lifecycle.planOutputs || containsUnknown(news)) return planned;
  const values = (await lifecycle.planOutputs(news, { baseDir })) as Record<string, unknown>;
  const out = { ...planned };
  for (const attr of computedOnlyAttributes(entry.block)) {
    if (attr.coreName in values) {
      out[attr.name] = objectToTerraform([attr], values)[attr.name] ?? null;
    }
  }
  return out;
}

/**
 * PlanResourceChange. Create: outputs unknown, plan-time hashes filled. Update:
 * the core's `diff` (unknown inputs count as changed by their change rule);
 * replace-rule changes become `requires_replace`; recomputed outputs unknown,
 * stable ones kept.
 */
export async function planResource(
  entry: CatalogResource,
  req: PlanResourceChange_Request,
  runtime: ProviderRuntime,
): Promise<Init<typeof PlanResourceChange_ResponseSchema>> {
  const prior = decodeDynamic(req.priorState) as TfObject | null;
  const proposed = decodeDynamic(req.proposedNewState) as TfObject | null;
  const config = decodeDynamic(req.config) as TfObject | null;
  if (proposed === null) return { plannedState: encodeDynamic(null) };
  const { descriptor, block } = entry;
  const news = coreInputs(block, config);
  const planned: TfObject = { ...proposed };

  if (prior === null) {
    for (const attr of block.attributes) {
      if (!attr.computed) continue;
      const computedOnly = !attr.required && !attr.optional;
      if (computedOnly || config?.[attr.name] === null) planned[attr.name] = UNKNOWN;
    }
    return {
      plannedState: encodeDynamic(await withPlanOutputs(entry, planned, news, runtime.baseDir)),
    };
  }

  const olds = coreOutputs(block, prior);
  const unknownInputs = inputAttributes(block).filter((a) => containsUnknown(config?.[a.name]));
  const known = { ...news };
  for (const attr of unknownInputs) known[attr.coreName] = olds[attr.coreName];
  const diff = await descriptor.lifecycle.diff(olds, known, {
    baseDir: runtime.baseDir,
    isUnknown,
  });
  const replaces = new Set(diff.replaces);
  const updates = new Set(diff.updates);
  for (const attr of unknownInputs) {
    const rule = descriptor.changeRules[attr.coreName] ?? "replace";
    if (rule === "replace") replaces.add(attr.coreName);
    else if (rule === "update") updates.add(attr.coreName);
  }
  if (replaces.size === 0 && updates.size === 0) return { plannedState: encodeDynamic(planned) };

  for (const attr of computedOnlyAttributes(block)) {
    if (attr.name === ID_ATTRIBUTE) {
      if (replaces.size > 0) planned[attr.name] = UNKNOWN;
      continue;
    }
    const rule = descriptor.outputRules[attr.coreName] ?? "recomputed";
    if (replaces.size > 0 || rule === "recomputed") planned[attr.name] = UNKNOWN;
  }
  const requiresReplace = inputAttributes(block)
    .filter((a) => replaces.has(a.coreName))
    .map((a) => topLevelPath(a.name));
  return {
    plannedState: encodeDynamic(await withPlanOutputs(entry, planned, news, runtime.baseDir)),
    requiresReplace,
  };
}

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
  const prior = decodeDynamic(req.priorState) as TfObject | null;
  const planned = decodeDynamic(req.plannedState) as TfObject | null;
  const config = decodeDynamic(req.config) as TfObject | null;
  const { descriptor, block, typeName } = entry;
  const lifecycle = descriptor.lifecycle;
  const ctx = runtime.context(signal);
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
  const current = decodeDynamic(req.currentState) as TfObject | null;
  if (current === null) return { newState: encodeDynamic(null) };
  const { descriptor, block, typeName } = entry;
  const ctx = runtime.context(signal);
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
  const ctx = runtime.context(signal);
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
 * (attributes added since are null, removed ones dropped).
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
  const reshaped = objectToTerraform(
    block.attributes,
    objectToCore(block.attributes, raw as TfObject),
  );
  return { upgradedState: encodeDynamic(reshaped) };
}
