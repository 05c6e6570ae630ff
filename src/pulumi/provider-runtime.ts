/**
 * What the serialized dynamic provider calls inside the plugin: the generic
 * adapter from Pulumi's provider calls to a {@link ResourceLifecycle}. It lives
 * here (loaded with `require` by the provider at call time) so that nothing of
 * it is serialized into state.
 *
 * @module
 * @internal
 */
import { redact } from "../errors";
import type { CheckFailure, ResourceContext, ResourceLifecycle } from "../resources/core/lifecycle";
import { sandboxReaderLifecycle } from "../resources/sandbox-reader/sandbox-reader.lifecycle";
import { snapshotLifecycle } from "../resources/snapshot/snapshot.lifecycle";
import { provisionerLifecycle } from "../resources/provisioner";
import { templateLifecycle } from "../resources/template/template.lifecycle";
import { UNKNOWN_SENTINEL } from "./constants";
import { configFromSettings, type ProviderSettings } from "./settings";

/** The key Pulumi adds to inputs and outputs for the serialized provider. */
const PROVIDER_KEY = "__provider";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyLifecycle = ResourceLifecycle<any, any>;

/** The lifecycles the adapter serves, by type name. Adding a resource is one line here. */
const LIFECYCLES: Record<string, () => AnyLifecycle> = {
  Template: () => templateLifecycle,
  Snapshot: () => snapshotLifecycle,
  SandboxReader: () => sandboxReaderLifecycle,
  Provisioner: () => provisionerLifecycle,
};

function lifecycleOf(typeName: string): AnyLifecycle {
  const lifecycle = LIFECYCLES[typeName]?.();
  if (!lifecycle) throw new Error(`sandbox-iac has no resource type ${JSON.stringify(typeName)}`);
  return lifecycle;
}

const isUnknown = (value: unknown): boolean => value === UNKNOWN_SENTINEL;

/** Drops `__provider` (Pulumi's, not ours) from a property bag. */
function withoutProvider(props: Record<string, unknown> | undefined): Record<string, unknown> {
  const { [PROVIDER_KEY]: _drop, ...rest } = props ?? {};
  return rest;
}

/**
 * Makes a value safe for protobuf `Struct`: no `undefined`, functions, Buffers
 * or BigInts (they throw "Unexpected struct type"), Dates as ISO text.
 */
export function toWire<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value ?? {}, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v)),
  ) as T;
}

function context(settings: ProviderSettings | undefined): ResourceContext {
  return {
    config: configFromSettings(settings),
    // The plugin's stdout reaches the user as info diagnostics.
    log: (line) => console.log(redact(line)),
  };
}

/** Pulumi `check`: every failure with its property path; unknown values tolerated. */
export function check(
  typeName: string,
  news: Record<string, unknown>,
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const raw = withoutProvider(news);
  const result = lifecycleOf(typeName).check(raw, { isUnknown });
  return { inputs: toWire(result.inputs ?? raw), failures: result.failures };
}

/** Pulumi `diff`, from the stored outputs to the checked inputs. */
export async function diff(
  typeName: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const result = await lifecycleOf(typeName).diff(withoutProvider(olds), withoutProvider(news), {
    isUnknown,
  });
  return {
    changes: result.changes,
    replaces: result.replaces,
    deleteBeforeReplace: result.deleteBeforeReplace ?? false,
  };
}

/** Pulumi `create`. */
export async function create(
  typeName: string,
  settings: ProviderSettings | undefined,
  inputs: Record<string, unknown>,
): Promise<{ id: string; outs: Record<string, unknown> }> {
  const { id, outputs } = await lifecycleOf(typeName).create(
    withoutProvider(inputs),
    context(settings),
  );
  return { id, outs: toWire(outputs) };
}

/** Pulumi `read` (refresh): an empty id means the resource is gone. */
export async function read(
  typeName: string,
  settings: ProviderSettings | undefined,
  id: string,
  props: Record<string, unknown>,
): Promise<{ id: string; props: Record<string, unknown> }> {
  const found = await lifecycleOf(typeName).read(id, withoutProvider(props), context(settings));
  return found ? { id: found.id, props: toWire(found.outputs) } : { id: "", props: {} };
}

/** Pulumi `update`: returns every output, never an empty bag. */
export async function update(
  typeName: string,
  settings: ProviderSettings | undefined,
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ outs: Record<string, unknown> }> {
  const outs = await lifecycleOf(typeName).update(
    id,
    withoutProvider(olds),
    withoutProvider(news),
    context(settings),
  );
  return { outs: toWire(outs) };
}

/** Pulumi `delete`; already gone counts as success (the lifecycles ensure it). */
export async function remove(
  typeName: string,
  settings: ProviderSettings | undefined,
  id: string,
  olds: Record<string, unknown>,
): Promise<void> {
  await lifecycleOf(typeName).delete(id, withoutProvider(olds), context(settings));
}
