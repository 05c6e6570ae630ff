/**
 * The data source RPCs: validate the arguments, then run the query.
 *
 * @module
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type ReadDataSource_Request,
  ReadDataSource_ResponseSchema,
  type ValidateDataResourceConfig_Request,
  ValidateDataResourceConfig_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import { checkWithSchema } from "../../resources/core/check";
import { resourceLabel } from "../../resources/core/log-label";
import type { CatalogDataSource } from "../schema/catalog";
import { encodeDynamic, isUnknown } from "../values/dynamic-value";
import { failureDiagnostic } from "./diagnostics";
import type { ProviderRuntime } from "./runtime";
import { coreInputs, decodeObject, inputAttributes, withOutputs } from "./state";
import { failureDiagnostics } from "./validate";

/** ValidateDataResourceConfig: the arguments against the descriptor's schema. */
export function validateDataSource(
  entry: CatalogDataSource,
  req: ValidateDataResourceConfig_Request,
): MessageInitShape<typeof ValidateDataResourceConfig_ResponseSchema> {
  const config = decodeObject(req.config);
  const result = checkWithSchema(entry.descriptor.args, coreInputs(entry.block, config), {
    isUnknown,
  });
  return { diagnostics: failureDiagnostics(inputAttributes(entry.block), result.failures) };
}

/** ReadDataSource: the arguments as written plus what the query returned. */
export async function readDataSource(
  entry: CatalogDataSource,
  req: ReadDataSource_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<MessageInitShape<typeof ReadDataSource_ResponseSchema>> {
  const config = decodeObject(req.config) ?? {};
  const args = coreInputs(entry.block, config);
  const checked = checkWithSchema(entry.descriptor.args, args);
  if (checked.failures.length > 0) {
    return { diagnostics: failureDiagnostics(inputAttributes(entry.block), checked.failures) };
  }
  const ctx = runtime.context(signal, resourceLabel(`data.${entry.typeName}`, args));
  try {
    const result = await entry.descriptor.read(args, ctx);
    return {
      state: encodeDynamic(
        withOutputs(entry.block, config, result as Record<string, unknown>, undefined),
      ),
    };
  } catch (err) {
    return { diagnostics: [failureDiagnostic(`${entry.typeName} read`, err, ctx.logTail)] };
  }
}
