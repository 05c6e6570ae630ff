/**
 * Validating and planning a resource: `check` on the configuration, then the
 * core's planned change written as Terraform's planned state,
 * requires_replace and the private record apply acts on.
 *
 * @module
 */
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import {
  type Diagnostic,
  type PlanResourceChange_Request,
  PlanResourceChange_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import {
  type PlanningOptions,
  outputKnownAfter,
  outputRuleOf,
  planChange,
  planTimeOutputs,
} from "../../resources/core/planned-change";
import type { CatalogResource } from "../schema/catalog";
import { ID_ATTRIBUTE } from "../schema/blocks";
import { topLevelPath } from "../values/attribute-path";
import { type DecodedObject, type TfObject, blockCodec } from "../values/block-codec";
import { UNKNOWN, isUnknown } from "../values/dynamic-value";
import { encodePlannedChange } from "../values/planned-private";
import type { ProviderRuntime } from "./runtime";
import { failureDiagnostics } from "./validate";

type Init<S extends DescMessage> = MessageInitShape<S>;

/** ValidateResourceConfig: `check` on the configuration, unknown values skipped. */
export function validateResource(
  entry: CatalogResource,
  config: DecodedObject | null,
): Diagnostic[] {
  const result = entry.descriptor.lifecycle.check(config?.inputs ?? {}, { isUnknown });
  return failureDiagnostics(blockCodec(entry.block).inputs, result.failures);
}

/** Fills plan-time outputs (content hashes of local files) into `planned`. */
async function withPlanOutputs(
  entry: CatalogResource,
  planned: TfObject,
  news: Record<string, unknown>,
  options: PlanningOptions,
): Promise<TfObject> {
  const codec = blockCodec(entry.block);
  const values = await planTimeOutputs(entry.descriptor.lifecycle, news, options);
  for (const attr of codec.computedOnly) {
    if (attr.coreName in values) planned[attr.name] = codec.value(attr, values[attr.coreName]);
  }
  return planned;
}

/**
 * PlanResourceChange. Create: outputs unknown, plan-time hashes filled.
 * Update: the core's planned change; replace-rule changes become
 * `requires_replace`; outputs the change recomputes are unknown, the others
 * kept; the change goes to apply in `plannedPrivate`.
 */
export async function planResource(
  entry: CatalogResource,
  req: PlanResourceChange_Request,
  runtime: ProviderRuntime,
): Promise<Init<typeof PlanResourceChange_ResponseSchema>> {
  const { descriptor, block } = entry;
  const codec = blockCodec(block);
  const config = codec.config(req.config);
  const prior = codec.read(req.priorState);
  // The proposed state is only written back: Terraform's object, not read into core values.
  const proposed = codec.decode(req.proposedNewState);
  if (proposed === null) return { plannedState: codec.encode(null) };
  const news = config?.inputs ?? {};
  const options = { baseDir: runtime.baseDir, isUnknown };
  const planned: TfObject = { ...proposed };

  if (prior === null) {
    for (const attr of block.attributes) {
      if (!attr.computed) continue;
      const computedOnly = !attr.required && !attr.optional;
      if (computedOnly || config?.terraform[attr.name] === null) planned[attr.name] = UNKNOWN;
    }
    return { plannedState: codec.encode(await withPlanOutputs(entry, planned, news, options)) };
  }

  const change = await planChange(descriptor, prior.outputs, news, options);
  const plannedPrivate = encodePlannedChange(change);
  if (change.replaces.length === 0 && change.updates.length === 0) {
    return { plannedState: codec.encode(planned), plannedPrivate };
  }
  for (const attr of codec.computedOnly) {
    // The id names the object in the service: it changes with a replacement only.
    const rule = attr.name === ID_ATTRIBUTE ? "stable" : outputRuleOf(descriptor, attr.coreName);
    if (!outputKnownAfter(rule, change, planned[attr.name])) planned[attr.name] = UNKNOWN;
  }
  const requiresReplace = codec.inputs
    .filter((a) => change.replaces.includes(a.coreName))
    .map((a) => topLevelPath(a.name));
  return {
    plannedState: codec.encode(await withPlanOutputs(entry, planned, news, options)),
    requiresReplace,
    plannedPrivate,
  };
}
