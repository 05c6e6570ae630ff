/**
 * Validating and planning a resource: `check` on the configuration, then the
 * core's `diff` translated into Terraform's planned state and requires_replace.
 *
 * @module
 */
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import {
  type PlanResourceChange_Request,
  PlanResourceChange_ResponseSchema,
  type ValidateResourceConfig_Request,
  ValidateResourceConfig_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import { recomputedBy } from "../../resources/core/descriptor";
import type { CatalogResource } from "../schema/catalog";
import { ID_ATTRIBUTE } from "../schema/blocks";
import { UNKNOWN, encodeDynamic, isUnknown } from "../values/dynamic-value";
import { containsUnknown, objectToTerraform, topLevelPath } from "../values/convert";
import type { ProviderRuntime } from "./runtime";
import {
  type TfObject,
  decodeObject,
  computedOnlyAttributes,
  coreInputs,
  coreOutputs,
  inputAttributes,
} from "./state";
import { failureDiagnostics } from "./validate";

type Init<S extends DescMessage> = MessageInitShape<S>;

/** ValidateResourceConfig: `check` on the configuration, unknown values skipped. */
export function validateResource(
  entry: CatalogResource,
  req: ValidateResourceConfig_Request,
): Init<typeof ValidateResourceConfig_ResponseSchema> {
  const config = decodeObject(req.config);
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
  const prior = decodeObject(req.priorState);
  const proposed = decodeObject(req.proposedNewState);
  const config = decodeObject(req.config);
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
    // A stable output keeps the value it has; one it does not have yet (e.g. a kept
    // sandbox killed out of band, provisioned again by this update) is not known yet.
    const unset = planned[attr.name] === null || planned[attr.name] === undefined;
    if (replaces.size > 0 || recomputedBy(rule, updates) || unset) planned[attr.name] = UNKNOWN;
  }
  const requiresReplace = inputAttributes(block)
    .filter((a) => replaces.has(a.coreName))
    .map((a) => topLevelPath(a.name));
  return {
    plannedState: encodeDynamic(await withPlanOutputs(entry, planned, news, runtime.baseDir)),
    requiresReplace,
  };
}
