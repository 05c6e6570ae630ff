/**
 * The conveniences the `sandbox-iac/cdktn` and `sandbox-iac/cdktf` constructs
 * add to the generated bindings, written once for both runtimes (which each
 * entry point passes in): local paths packaged as assets, synth-time checks with
 * the core's schemas, and no API key in the synthesized JSON.
 *
 * @module
 */
import type { Construct } from "constructs";
import { constructProblems } from "../terraform/construct-check";
import { type CopySourceRef, stageCopyContext } from "./copy-context";
import { packageLocalPath } from "./local-paths";
import type { CdkRuntime } from "./runtime";

/** A value with its local paths replaced by asset paths, and the paths that could not be packaged. */
export interface Packaged<T> {
  /** The value to hand to the generated setter. */
  value: T;
  /** One line per missing path: `<attribute path>: <problem>`. */
  problems: string[];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** True when `src` is a glob pattern rather than one path (the characters glob treats as magic). */
function isGlob(src: string): boolean {
  return /[*?[\]{}]/.test(src);
}

/**
 * Packages the local files of a Template's `build` as assets: its `context`
 * whole (`context` under `scope`; COPY sources are then read from it, as the
 * Dockerfile's build context), else the `src` and `sources` of every COPY step
 * staged as one context (copy-context.ts), so that the steps keep the user's
 * paths. A glob needs `context`: it names no single path to package.
 */
export function packageCopySources<T>(
  scope: Construct,
  build: T,
  runtime: CdkRuntime,
): Packaged<T> {
  const fields = record(build);
  if (!fields || runtime.Token.isUnresolved(build)) return { value: build, problems: [] };
  if (typeof fields.context === "string") {
    const packaged = packageLocalPath(scope, "context", fields.context, runtime);
    if (!packaged.ok)
      return { value: build, problems: [`buildAttribute.context ${packaged.problem}`] };
    return { value: { ...fields, context: packaged.path } as T, problems: [] };
  }
  if (!Array.isArray(fields.steps)) return { value: build, problems: [] };
  const steps: unknown[] = fields.steps;
  const sources: CopySourceRef[] = [];
  const problems: string[] = [];
  let late = false;
  const visit = (src: string, where: string): void => {
    if (runtime.Token.isUnresolved(src)) late = true;
    else if (isGlob(src))
      problems.push(
        `${where} "${src}" is a glob pattern: set buildAttribute.context to the directory it reads from (packaged whole) and give src relative to it`,
      );
    else sources.push({ where, src });
  };
  steps.forEach((step, i) => {
    const copy = record(record(step)?.copy);
    if (!copy) return;
    if (runtime.Token.isUnresolved(copy)) late = true;
    else if (typeof copy.src === "string") visit(copy.src, `buildAttribute.steps[${i}].copy.src`);
    else if (Array.isArray(copy.sources)) {
      if (runtime.Token.isUnresolved(copy.sources)) late = true;
      else
        copy.sources.forEach((src: unknown, j) => {
          if (typeof src === "string") visit(src, `buildAttribute.steps[${i}].copy.sources[${j}]`);
        });
    }
  });
  // A path known only at apply cannot be staged: each source is then its own asset.
  if (late && problems.length === 0)
    return packageEachSource(scope, fields, steps, runtime) as Packaged<T>;
  if (problems.length > 0 || sources.length === 0) return { value: build, problems };
  const staged = stageCopyContext(scope, sources, runtime);
  if (!staged.ok) return { value: build, problems: staged.problems };
  const at = (src: unknown): unknown =>
    typeof src === "string" ? (staged.paths.get(src) ?? src) : src;
  const rewritten = steps.map((step) => {
    const copy = record(record(step)?.copy);
    if (!copy) return step;
    const moved: Record<string, unknown> = { ...copy, src: at(copy.src) };
    if (copy.src === undefined) delete moved.src;
    if (Array.isArray(copy.sources)) moved.sources = copy.sources.map(at);
    return { ...record(step), copy: moved };
  });
  return { value: { ...fields, context: staged.context, steps: rewritten } as T, problems: [] };
}

/**
 * Each COPY source packaged as its own asset (`copy-<step>[-<source>]`), for a
 * build with a source known only at apply: the steps then name asset paths.
 */
function packageEachSource(
  scope: Construct,
  fields: Record<string, unknown>,
  steps: unknown[],
  runtime: CdkRuntime,
): Packaged<Record<string, unknown>> {
  const problems: string[] = [];
  const packageOne = (id: string, src: string, where: string): string => {
    if (runtime.Token.isUnresolved(src)) return src;
    if (isGlob(src)) {
      problems.push(
        `${where} "${src}" is a glob pattern: set buildAttribute.context to the directory it reads from (packaged whole) and give src relative to it`,
      );
      return src;
    }
    const packaged = packageLocalPath(scope, id, src, runtime);
    if (!packaged.ok) problems.push(`${where} ${packaged.problem}`);
    return packaged.path;
  };
  const packagedSteps = steps.map((step: unknown, i) => {
    const copy = record(record(step)?.copy);
    if (!copy || runtime.Token.isUnresolved(copy)) return step;
    const packaged = { ...copy };
    if (typeof copy.src === "string")
      packaged.src = packageOne(`copy-${i}`, copy.src, `buildAttribute.steps[${i}].copy.src`);
    if (Array.isArray(copy.sources) && !runtime.Token.isUnresolved(copy.sources))
      packaged.sources = copy.sources.map((src: unknown, j) =>
        typeof src === "string"
          ? packageOne(`copy-${i}-${j}`, src, `buildAttribute.steps[${i}].copy.sources[${j}]`)
          : src,
      );
    return { ...record(step), copy: packaged };
  });
  return { value: { ...fields, steps: packagedSteps }, problems };
}

/**
 * The problem with a registry password given as a literal in a Template's
 * `build`: it would be written in clear into `cdk.tf.json`. A late-bound value
 * (a `TerraformVariable` declared `sensitive`) is accepted.
 */
export function registryPasswordProblems(build: unknown, runtime: CdkRuntime): string[] {
  const password = record(record(build)?.fromImageRegistry)?.password;
  if (typeof password !== "string" || runtime.Token.isUnresolved(password)) return [];
  return [
    "buildAttribute.fromImageRegistry.password is a literal, which would be written in clear into cdk.tf.json: " +
      "pass a TerraformVariable declared with sensitive: true (set it with TF_VAR_<name> in the pipeline)",
  ];
}

/**
 * The problem with a Provisioner's SOCKS5 proxy password given as a literal
 * in its `network`: it would be written in clear into `cdk.tf.json`. A
 * late-bound value (a `TerraformVariable` declared `sensitive`) is accepted.
 */
export function proxyPasswordProblems(network: unknown, runtime: CdkRuntime): string[] {
  const password = record(record(network)?.egressProxy)?.password;
  if (typeof password !== "string" || runtime.Token.isUnresolved(password)) return [];
  return [
    "network.egressProxy.password is a literal, which would be written in clear into cdk.tf.json: " +
      "pass a TerraformVariable declared with sensitive: true (set it with TF_VAR_<name> in the pipeline)",
  ];
}

/**
 * Packages the `source` of every entry of a Provisioner's `files` as an asset
 * (`file-<index>` under `scope`).
 */
export function packageFileSources<T>(
  scope: Construct,
  files: T,
  runtime: CdkRuntime,
): Packaged<T> {
  if (!Array.isArray(files) || runtime.Token.isUnresolved(files)) {
    return { value: files, problems: [] };
  }
  const problems: string[] = [];
  const packagedFiles = files.map((file: unknown, i) => {
    const fields = record(file);
    if (!fields || typeof fields.source !== "string") return file;
    const packaged = packageLocalPath(scope, `file-${i}`, fields.source, runtime);
    if (!packaged.ok) {
      problems.push(`files[${i}].source ${packaged.problem}`);
      return file;
    }
    return { ...fields, source: packaged.path };
  });
  return { value: packagedFiles as T, problems };
}

/** What a validated construct exposes to {@link addProviderValidation}. */
export interface ValidatedConstruct extends Construct {
  /** The resource's Terraform type, e.g. `sandboxiac_template`. */
  readonly terraformResourceType: string;
}

/** The construct options every Terraform resource takes besides its attributes. */
const META_ARGUMENTS = [
  "connection",
  "count",
  "dependsOn",
  "forEach",
  "lifecycle",
  "provider",
  "provisioners",
];

/**
 * The keys `construct`'s config may hold: every input the generated binding
 * has (it gives each an `<name>Input` getter) and the meta-arguments.
 */
function configKeysOf(construct: object): string[] {
  const keys = new Set(META_ARGUMENTS);
  for (let proto: object | null = construct; proto !== null; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name.endsWith("Input") && name.length > "Input".length)
        keys.add(name.slice(0, -"Input".length));
    }
  }
  return [...keys].sort();
}

/**
 * Adds a synth-time validation (`node.addValidation`) that runs the provider's
 * own validation on the construct's attributes as they will be synthesized,
 * the keys of `config` the construct does not know, plus any `extra` problems
 * (e.g. missing local paths). Each problem names the construct's property path.
 */
export function addProviderValidation(
  construct: ValidatedConstruct,
  config: object,
  attributes: () => Record<string, unknown>,
  runtime: CdkRuntime,
  extra: () => readonly string[] = () => [],
): void {
  construct.node.addValidation({
    validate: () =>
      constructProblems({
        terraformType: construct.terraformResourceType,
        knownKeys: configKeysOf(construct),
        config,
        attributes: attributes(),
        isLate: (value) => runtime.Token.isUnresolved(value),
        adapterProblems: extra(),
      }).map((problem) => `${construct.terraformResourceType}.${construct.node.id}: ${problem}`),
  });
}

/**
 * The problem with an `api_key` given in the provider block: a literal key
 * would be written in clear into `cdk.tf.json`. A late-bound value (a
 * `TerraformVariable` declared `sensitive`) is accepted, but the message
 * recommends the environment: terraform writes variable values in clear into
 * saved plan files.
 */
export function apiKeyProblems(apiKey: string | undefined, runtime: CdkRuntime): string[] {
  if (apiKey === undefined || runtime.Token.isUnresolved(apiKey)) return [];
  return [
    "sandboxiac provider: api_key is a literal value, which would be written in clear into cdk.tf.json: " +
      "leave api_key out and set E2B_API_KEY in the environment terraform runs in " +
      "(a TerraformVariable, even sensitive, is written in clear into saved plan files)",
  ];
}

/**
 * The problem with a Secret's `value` given as a literal: it would be written
 * in clear into `cdk.tf.json`. A late-bound value (a `TerraformVariable`
 * declared `sensitive`, or another resource's output) is accepted.
 */
export function secretValueProblems(value: string | undefined, runtime: CdkRuntime): string[] {
  if (value === undefined || runtime.Token.isUnresolved(value)) return [];
  return [
    "value is a literal, which would be written in clear into cdk.tf.json: " +
      "pass a TerraformVariable declared with sensitive: true (set it with TF_VAR_<name> in the pipeline)",
  ];
}
