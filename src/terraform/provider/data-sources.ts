/**
 * The data source RPCs: validate the arguments, then run the query.
 *
 * @module
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type Diagnostic,
  type ReadDataSource_Request,
  ReadDataSource_ResponseSchema,
} from "../../gen/terraform/tfplugin6_pb";
import { checkWithSchema } from "../../resources/core/check";
import { resourceLabel } from "../../resources/core/log-label";
import type { CatalogDataSource } from "../schema/catalog";
import { type DecodedObject, blockCodec } from "../values/block-codec";
import { isUnknown } from "../values/dynamic-value";
import { failureDiagnostic } from "./diagnostics";
import type { ProviderRuntime } from "./runtime";
import { failureDiagnostics } from "./validate";

/** ValidateDataResourceConfig: the arguments against the descriptor's schema. */
export function validateDataSource(
  entry: CatalogDataSource,
  config: DecodedObject | null,
): Diagnostic[] {
  const result = checkWithSchema(entry.descriptor.args, config?.inputs ?? {}, { isUnknown });
  return failureDiagnostics(blockCodec(entry.block).inputs, result.failures);
}

/** ReadDataSource: the arguments as written plus what the query returned. */
export async function readDataSource(
  entry: CatalogDataSource,
  req: ReadDataSource_Request,
  runtime: ProviderRuntime,
  signal: AbortSignal,
): Promise<MessageInitShape<typeof ReadDataSource_ResponseSchema>> {
  const codec = blockCodec(entry.block);
  const config = codec.config(req.config);
  const args = config?.inputs ?? {};
  const checked = checkWithSchema(entry.descriptor.args, args);
  if (checked.failures.length > 0) {
    return { diagnostics: failureDiagnostics(codec.inputs, checked.failures) };
  }
  const ctx = runtime.context(signal, resourceLabel(`data.${entry.typeName}`, args));
  try {
    const result = await entry.descriptor.read(args, ctx);
    return {
      state: codec.encode(codec.withOutputs(config?.terraform ?? {}, result, undefined)),
    };
  } catch (err) {
    return { diagnostics: [failureDiagnostic(`${entry.typeName} read`, err, ctx.logTail)] };
  }
}
