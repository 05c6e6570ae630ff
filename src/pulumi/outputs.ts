/**
 * Helpers shared by the resource classes: the props object that declares
 * every output (as `undefined`, so Pulumi exposes it) next to the inputs.
 *
 * @module
 */
import type * as pulumi from "@pulumi/pulumi";

/** `args` plus each of `outputNames` set to `undefined` (an output Pulumi will fill). */
export function propsWithOutputs(args: object, outputNames: readonly string[]): pulumi.Inputs {
  const props: Record<string, unknown> = { ...args };
  for (const name of outputNames) if (!(name in props)) props[name] = undefined;
  return props;
}

/** `opts` with `secrets` added to `additionalSecretOutputs`. */
export function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  secrets: readonly string[],
): pulumi.CustomResourceOptions {
  return {
    ...opts,
    additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...secrets],
  };
}
