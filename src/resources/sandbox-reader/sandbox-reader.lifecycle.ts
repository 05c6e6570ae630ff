/**
 * The SandboxReader resource: reads an existing sandbox (and optionally its
 * latest metrics) into outputs. It never changes the sandbox; deleting it
 * deletes nothing.
 *
 * @module
 */
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "../core/check";
import { diffByRules } from "../core/diff";
import type { ResourceContext, ResourceLifecycle } from "../core/lifecycle";
import {
  sandboxReaderArgsSchema,
  sandboxReaderChangeRules,
  type SandboxReaderInputs,
  type SandboxReaderOutputs,
} from "./sandbox-reader.args";
import type { SandboxDetail } from "../../client/control";
import { sandboxReaderControl } from "./sandbox-reader.control";

function toOutputs(inputs: SandboxReaderInputs, sandbox: SandboxDetail): SandboxReaderOutputs {
  const outputs: SandboxReaderOutputs = {
    ...inputs,
    templateID: sandbox.templateID,
    clientID: sandbox.clientID,
    startedAt: sandbox.startedAt,
    endAt: sandbox.endAt,
    envdVersion: sandbox.envdVersion,
    cpuCount: sandbox.cpuCount,
    memoryMB: sandbox.memoryMB,
    diskSizeMB: sandbox.diskSizeMB,
    state: sandbox.state,
    metadata: sandbox.metadata ?? {},
    envdAccessToken: sandbox.envdAccessToken ?? "",
    domain: sandbox.domain ?? null,
    volumeMounts: sandbox.volumeMounts ?? [],
  };
  if (sandbox.alias !== undefined) outputs.alias = sandbox.alias;
  return outputs;
}

/** Reads the sandbox; `undefined` when it is gone. */
async function readSandbox(
  inputs: SandboxReaderInputs,
  ctx: ResourceContext,
): Promise<SandboxReaderOutputs | undefined> {
  const control = sandboxReaderControl(ctx);
  const sandbox = await control.getSandbox(inputs.sandboxID);
  if (!sandbox) return undefined;
  const outputs = toOutputs(inputs, sandbox);
  if (inputs.includeMetrics) {
    const metrics = await control.latestMetrics(inputs.sandboxID);
    if (metrics) outputs.metrics = metrics;
  }
  return outputs;
}

function missing(sandboxID: string): SandboxIacError {
  return new SandboxIacError(
    "not_found",
    `sandbox ${JSON.stringify(sandboxID)} does not exist (or belongs to another team): check sandboxID, and that the sandbox is still running or paused`,
    { operation: "sandboxes.get", resourceId: sandboxID },
  );
}

function inputsOf(olds: SandboxReaderOutputs): SandboxReaderInputs {
  const inputs: SandboxReaderInputs = { sandboxID: olds.sandboxID };
  if (olds.includeMetrics !== undefined) inputs.includeMetrics = olds.includeMetrics;
  return inputs;
}

/** The SandboxReader lifecycle. */
export const sandboxReaderLifecycle: ResourceLifecycle<SandboxReaderInputs, SandboxReaderOutputs> =
  {
    typeName: "SandboxReader",

    check(news, options) {
      return checkWithSchema(sandboxReaderArgsSchema, news, options);
    },

    diff(olds, news, options = {}) {
      return diffByRules(olds, news, sandboxReaderChangeRules, options);
    },

    async create(inputs, ctx) {
      const outputs = await readSandbox(inputs, ctx);
      if (!outputs) throw missing(inputs.sandboxID);
      return { id: inputs.sandboxID, outputs };
    },

    async read(id, olds, ctx) {
      const outputs = await readSandbox(inputsOf(olds), ctx);
      return outputs ? { id, outputs } : undefined;
    },

    async update(_id, _olds, news, ctx) {
      const outputs = await readSandbox(news, ctx);
      if (!outputs) throw missing(news.sandboxID);
      return outputs;
    },

    async delete() {
      // It only reads: there is nothing to delete.
    },
  };
