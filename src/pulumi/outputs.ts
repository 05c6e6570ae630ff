/**
 * What the resource classes derive from the registry of descriptors: the
 * props object that declares every output (as `undefined`, so Pulumi exposes
 * it) next to the inputs, and the options that mark secrets and the
 * replacement order. No class restates a field.
 *
 * @module
 */
import * as pulumi from "@pulumi/pulumi";
import { deletesFirst, outputNames, resourceDescriptor } from "../resources/registry";

/**
 * `value` as a Pulumi secret, so the engine stores it encrypted among the
 * resource's inputs even when the program gave a plain string (marking only
 * the outputs, as `additionalSecretOutputs` does, leaves the inputs in clear).
 * An absent value stays absent: a secret `undefined` would reach `check` as
 * `null`.
 */
function asSecret(value: unknown): pulumi.Input<unknown> {
  if (value === undefined) return undefined;
  return pulumi.output(value).apply((v) => (v === undefined ? undefined : pulumi.secret(v)));
}

/**
 * `value` with the field at `path` (a nested secret input such as
 * `fromImageRegistry.password` under `build`) made a secret, leaving the rest
 * in clear: the engine stores the nested value encrypted and the plan shows
 * the rest of the object. Values still to be resolved are resolved first.
 */
function withNestedSecret(value: unknown, path: readonly string[]): pulumi.Input<unknown> {
  if (value === undefined) return undefined;
  const set = (v: unknown, rest: readonly string[]): unknown => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const [key, ...deeper] = rest as [string, ...string[]];
    if (!(key in v)) return v;
    const inner = (v as Record<string, unknown>)[key];
    return {
      ...v,
      [key]: deeper.length === 0 ? asSecret(inner) : set(inner, deeper),
    };
  };
  return pulumi.output(value).apply((v) => set(v, path));
}

/**
 * `args` with each of `secretInputs` made a secret (a top-level name, or a
 * dotted path to a nested field), plus each of `outputNames` set to
 * `undefined` (an output Pulumi will fill).
 */
function propsWithOutputs(
  args: object,
  secretInputs: readonly string[],
  names: readonly string[],
): pulumi.Inputs {
  const props: Record<string, unknown> = { ...args };
  for (const name of secretInputs) {
    const [top, ...nested] = name.split(".") as [string, ...string[]];
    if (!(top in props)) continue;
    props[top] = nested.length === 0 ? asSecret(props[top]) : withNestedSecret(props[top], nested);
  }
  for (const name of names) if (!(name in props)) props[name] = undefined;
  return props;
}

/** `opts` with `secrets` added to `additionalSecretOutputs`. */
function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  secrets: readonly string[],
): pulumi.CustomResourceOptions {
  if (secrets.length === 0) return { ...opts };
  return {
    ...opts,
    additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets],
  };
}

/**
 * The props of resource `typeName`: `args`, with every input its descriptor
 * marks sensitive made a Pulumi secret, and every output the descriptor declares.
 */
export function declaredProps(typeName: string, args: object): pulumi.Inputs {
  const descriptor = resourceDescriptor(typeName);
  return propsWithOutputs(args, descriptor.sensitiveInputs, outputNames(descriptor));
}

/**
 * The options of resource `typeName`: its sensitive inputs and outputs as
 * `additionalSecretOutputs`, and `deleteBeforeReplace` from its replacement
 * constraint (an explicit `deleteBeforeReplace` in `opts` wins).
 */
export function declaredOptions(
  typeName: string,
  args: object,
  opts: pulumi.CustomResourceOptions | undefined,
): pulumi.CustomResourceOptions {
  const descriptor = resourceDescriptor(typeName);
  // additionalSecretOutputs names top-level outputs only: a nested secret
  // input stays a secret in the outputs by the engine's own rule (an output
  // whose input was secret is secret, at any depth).
  const options = withSecretOutputs(opts, [
    ...descriptor.sensitiveInputs.filter((name) => !name.includes(".")),
    ...descriptor.sensitiveOutputs,
  ]);
  if (options.deleteBeforeReplace === undefined && deletesFirst(descriptor, { ...args }))
    options.deleteBeforeReplace = true;
  return options;
}
