/**
 * Turns Template inputs into the build request the official SDK sends
 * (`TemplateBuildStartV2`, docs/control-api.md#template-schemas): the same step types, the
 * same `args` layout, the same files hashes. A `dockerfile` becomes its base
 * and steps first (template.dockerfile.ts), followed by `steps`.
 *
 * @module
 */
import * as path from "node:path";
import type { TemplateBuildStartV2, TemplateStep } from "../../client/control";
import type { TemplateCopyInput, TemplateInputs, TemplateStepInput } from "./template.args";
import { joinRunLines } from "../core/run-lines";
import { parseDockerfile } from "./template.dockerfile";
import { calculateFilesHash, resolveCopySource, type CopySource } from "./template.files";

/** A COPY of one source resolved against the local disk, ready to hash and upload. */
export interface ResolvedCopy {
  /** Index of the step in the resolved steps ({@link resolvedSteps}). */
  stepIndex: number;
  /** Where the files are read from. */
  source: CopySource;
  /** The step's input. */
  copy: TemplateCopyInput;
  /** The files hash. */
  hash: string;
}

/** What a build starts from and runs, once a `dockerfile` is turned into steps. */
export interface ResolvedBuild {
  fromTemplate?: string;
  fromImage?: string;
  /** Every step in order (the Dockerfile's, then `build.steps`). */
  steps: TemplateStepInput[];
  startCmd?: string;
  readyCmd?: string;
  /** Dockerfile instructions ignored, as the SDK ignores them (it warns). */
  ignored: string[];
}

/** The base and steps of `inputs.build`, with its `dockerfile` (if any) expanded as the SDK does. */
export function resolvedBuild(inputs: TemplateInputs): ResolvedBuild {
  const build = inputs.build;
  const own = build.steps ?? [];
  const resolved: ResolvedBuild = { steps: own, ignored: [] };
  if (build.dockerfile !== undefined) {
    const parsed = parseDockerfile(build.dockerfile);
    resolved.fromImage = parsed.fromImage;
    resolved.steps = [...parsed.steps, ...own];
    resolved.ignored = parsed.ignored;
    // The SDK's setStartCmd after fromDockerfile replaces both commands.
    if (build.startCmd === undefined) {
      if (parsed.startCmd !== undefined) resolved.startCmd = parsed.startCmd;
      if (parsed.readyCmd !== undefined) resolved.readyCmd = parsed.readyCmd;
    }
  }
  if (build.fromTemplate !== undefined) resolved.fromTemplate = build.fromTemplate;
  if (build.fromImage !== undefined) resolved.fromImage = build.fromImage;
  if (build.startCmd !== undefined) resolved.startCmd = build.startCmd;
  if (build.readyCmd !== undefined) resolved.readyCmd = build.readyCmd;
  return resolved;
}

/** The directory COPY sources are relative to: `build.context` (against `baseDir`), else `baseDir`. */
function contextDirOf(inputs: TemplateInputs, baseDir: string): string {
  return inputs.build.context === undefined ? baseDir : path.resolve(baseDir, inputs.build.context);
}

/** The sources of a COPY: one, or several (one wire COPY each, as the SDK's `copy([...])`). */
function sourcesOf(copy: TemplateCopyInput): string[] {
  return copy.sources ?? (copy.src === undefined ? [] : [copy.src]);
}

/** Renders a mode the way the SDK's `padOctal` does (`0755`). */
function modeArg(mode: number | string | undefined): string {
  if (mode === undefined) return "";
  const value = typeof mode === "number" ? mode : parseInt(mode, 8);
  // The SDK drops a zero mode (`options.mode ? ... : ""`); do the same.
  return value ? value.toString(8).padStart(4, "0") : "";
}

/** Resolves and hashes every COPY source (local disk I/O only), in step order. */
export function resolveCopies(inputs: TemplateInputs, baseDir: string): ResolvedCopy[] {
  const contextDir = contextDirOf(inputs, baseDir);
  const copies: ResolvedCopy[] = [];
  for (const [stepIndex, step] of resolvedBuild(inputs).steps.entries()) {
    if (!step.copy) continue;
    for (const src of sourcesOf(step.copy)) {
      const source = resolveCopySource(src, contextDir);
      copies.push({
        stepIndex,
        source,
        copy: step.copy,
        hash: calculateFilesHash(source, step.copy.dest),
      });
    }
  }
  return copies;
}

function toWireSteps(step: TemplateStepInput, copies: readonly ResolvedCopy[]): TemplateStep[] {
  const force = step.force ?? false;
  if (step.run !== undefined) {
    const cmd = joinRunLines(step.run);
    return [{ type: "RUN", args: step.user ? [cmd, step.user] : [cmd], force }];
  }
  if (step.copy) {
    const { dest, user, mode } = step.copy;
    return copies.map((copy) => ({
      type: "COPY",
      args: [copy.source.src, dest, user ?? "", modeArg(mode)],
      force,
      filesHash: copy.hash,
    }));
  }
  if (step.env) {
    return [{ type: "ENV", args: Object.entries(step.env).flatMap(([k, v]) => [k, v]), force }];
  }
  if (step.workdir !== undefined) return [{ type: "WORKDIR", args: [step.workdir], force }];
  return [{ type: "USER", args: [step.user ?? ""], force }];
}

/** The build request for `inputs`, with the hashes of `copies` (from {@link resolveCopies}). */
export function toWireBuild(
  inputs: TemplateInputs,
  copies: readonly ResolvedCopy[],
): TemplateBuildStartV2 {
  const resolved = resolvedBuild(inputs);
  const build: TemplateBuildStartV2 = {
    force: inputs.build.skipCache ?? false,
    steps: resolved.steps.flatMap((step, i) =>
      toWireSteps(
        step,
        copies.filter((c) => c.stepIndex === i),
      ),
    ),
  };
  if (resolved.fromTemplate !== undefined) build.fromTemplate = resolved.fromTemplate;
  if (resolved.fromImage !== undefined) build.fromImage = resolved.fromImage;
  const registry = inputs.build.fromImageRegistry;
  if (registry !== undefined) {
    build.fromImageRegistry = {
      type: "registry",
      username: registry.username,
      password: registry.password,
    };
  }
  if (resolved.startCmd !== undefined) build.startCmd = resolved.startCmd;
  if (resolved.readyCmd !== undefined) build.readyCmd = resolved.readyCmd;
  return build;
}
