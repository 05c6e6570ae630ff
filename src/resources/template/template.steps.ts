/**
 * Turns Template inputs into the build request the official SDK sends
 * (`TemplateBuildStartV2`, docs/control-api.md#template-schemas): the same step types, the
 * same `args` layout, the same files hashes.
 *
 * @module
 */
import type { TemplateBuildStartV2, TemplateStep } from "../../client/control";
import type { TemplateCopyInput, TemplateInputs, TemplateStepInput } from "./template.args";
import { joinRunLines } from "../core/run-lines";
import { calculateFilesHash, resolveCopySource, type CopySource } from "./template.files";

/** A COPY step resolved against the local disk, ready to hash and upload. */
export interface ResolvedCopy {
  /** Index of the step in `build.steps`. */
  stepIndex: number;
  /** Where the files are read from. */
  source: CopySource;
  /** The step's input. */
  copy: TemplateCopyInput;
  /** The files hash. */
  hash: string;
}

/** Renders a mode the way the SDK's `padOctal` does (`0755`). */
function modeArg(mode: number | string | undefined): string {
  if (mode === undefined) return "";
  const value = typeof mode === "number" ? mode : parseInt(mode, 8);
  // The SDK drops a zero mode (`options.mode ? ... : ""`); do the same.
  return value ? value.toString(8).padStart(4, "0") : "";
}

/** Resolves and hashes every COPY step (local disk I/O only), in step order. */
export function resolveCopies(inputs: TemplateInputs, baseDir: string): ResolvedCopy[] {
  const copies: ResolvedCopy[] = [];
  for (const [stepIndex, step] of (inputs.build.steps ?? []).entries()) {
    if (!step.copy) continue;
    const source = resolveCopySource(step.copy.src, baseDir);
    copies.push({
      stepIndex,
      source,
      copy: step.copy,
      hash: calculateFilesHash(source, step.copy.dest),
    });
  }
  return copies;
}

function toWireStep(step: TemplateStepInput, copy: ResolvedCopy | undefined): TemplateStep {
  if (step.run !== undefined) {
    const cmd = joinRunLines(step.run);
    return { type: "RUN", args: step.user ? [cmd, step.user] : [cmd], force: false };
  }
  if (step.copy && copy) {
    const args = [copy.source.src, step.copy.dest, step.copy.user ?? "", modeArg(step.copy.mode)];
    return { type: "COPY", args, force: false, filesHash: copy.hash };
  }
  if (step.env) {
    return {
      type: "ENV",
      args: Object.entries(step.env).flatMap(([k, v]) => [k, v]),
      force: false,
    };
  }
  if (step.workdir !== undefined) return { type: "WORKDIR", args: [step.workdir], force: false };
  return { type: "USER", args: [step.user ?? ""], force: false };
}

/** The build request for `inputs`, with the hashes of `copies` (from {@link resolveCopies}). */
export function toWireBuild(
  inputs: TemplateInputs,
  copies: readonly ResolvedCopy[],
): TemplateBuildStartV2 {
  const byIndex = new Map(copies.map((c) => [c.stepIndex, c]));
  const build: TemplateBuildStartV2 = {
    force: false,
    steps: (inputs.build.steps ?? []).map((step, i) => toWireStep(step, byIndex.get(i))),
  };
  if (inputs.build.fromTemplate !== undefined) build.fromTemplate = inputs.build.fromTemplate;
  if (inputs.build.fromImage !== undefined) build.fromImage = inputs.build.fromImage;
  if (inputs.build.startCmd !== undefined) build.startCmd = inputs.build.startCmd;
  if (inputs.build.readyCmd !== undefined) build.readyCmd = inputs.build.readyCmd;
  return build;
}
