/**
 * The SandboxReader resource: reads an existing sandbox (and optionally its
 * latest metrics) into outputs, with the `sandbox` data source's query. It
 * never changes the sandbox; deleting it deletes nothing.
 *
 * @module
 */
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import { findSandbox, sandboxMissing } from "../core/sandbox-read";
import {
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
  type SandboxReaderInputs,
  type SandboxReaderOutputs,
} from "./sandbox-reader.args";

/** Reads the sandbox into outputs beside `inputs`; `undefined` when it is gone. */
async function readOutputs(
  inputs: SandboxReaderInputs,
  ctx: ResourceContext,
): Promise<SandboxReaderOutputs | undefined> {
  const fields = await findSandbox(inputs, ctx);
  return fields ? { ...inputs, ...fields } : undefined;
}

function inputsOf(olds: SandboxReaderOutputs): SandboxReaderInputs {
  const inputs: SandboxReaderInputs = { sandboxID: olds.sandboxID };
  if (olds.includeMetrics !== undefined) inputs.includeMetrics = olds.includeMetrics;
  return inputs;
}

/** The SandboxReader lifecycle. Import from an id alone reads the sandbox of that id. */
export const sandboxReaderLifecycle: ResourceLifecycle<SandboxReaderInputs, SandboxReaderOutputs> =
  {
    typeName: "SandboxReader",

    check(news, options) {
      return checkWithSchema(sandboxReaderArgsSchema, news, options);
    },

    diff(olds, news, options) {
      return diffByRules(olds, news, sandboxReaderChangeRules, options);
    },

    async create(inputs, ctx) {
      const outputs = await readOutputs(inputs, ctx);
      if (!outputs) throw sandboxMissing(inputs.sandboxID);
      return { id: inputs.sandboxID, outputs };
    },

    async read(id, olds, ctx) {
      const outputs = await readOutputs(olds ? inputsOf(olds) : { sandboxID: id }, ctx);
      return outputs ? { id, outputs } : undefined;
    },

    async update(_id, _olds, news, ctx) {
      const outputs = await readOutputs(news, ctx);
      if (!outputs) throw sandboxMissing(news.sandboxID);
      return outputs;
    },

    async delete() {
      // It only reads: there is nothing to delete.
    },
  };
