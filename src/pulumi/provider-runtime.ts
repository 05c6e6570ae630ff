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
import { resourceDescriptor } from "../resources/registry";
import { propertyText } from "../resources/core/unknown-keys";
import { resourceLabel } from "../resources/core/log-label";
import { UNKNOWN_SENTINEL } from "./constants";
import { configFromSettings, type ProviderSettings } from "./settings";
import { pluginStopSignal, tracked } from "./plugin-stop";

/** The key Pulumi adds to inputs and outputs for the serialized provider. */
const PROVIDER_KEY = "__provider";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyLifecycle = ResourceLifecycle<any, any>;

/** The lifecycle of `typeName`, from the registry of descriptors. */
function lifecycleOf(typeName: string): AnyLifecycle {
  return resourceDescriptor(typeName).lifecycle;
}

/**
 * Relative paths are relative to the program directory: the plugin runs
 * there (and the program, for its functions), so its working directory is it.
 */
function programDir(): string {
  return process.cwd();
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

function context(settings: ProviderSettings | undefined, label: string): ResourceContext {
  const signal = pluginStopSignal();
  return {
    config: configFromSettings(settings),
    baseDir: programDir(),
    // The plugin's stdout reaches the user as info diagnostics (the CLI forwards it).
    log: (line) => console.log(redact(`${label}: ${line}`)),
    // Fires when the engine closes the plugin mid-operation (plugin-stop.ts).
    ...(signal ? { signal } : {}),
  };
}

/**
 * Runs one provider call, counted among those a stop lets clean up, and then
 * says how long it took (`pulumi up` shows it among the diagnostics).
 */
async function timed<T>(
  ctx: ResourceContext,
  done: (result: T) => string,
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const result = await tracked(fn);
  ctx.log(`${done(result)} in ${((performance.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

/** Pulumi `check`: every failure with its property path; unknown values tolerated. */
export function check(
  typeName: string,
  news: Record<string, unknown>,
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const raw = withoutProvider(news);
  const result = lifecycleOf(typeName).check(raw, { isUnknown });
  // Paths as a TypeScript program writes them: `commands[0].timeoutSeconds`.
  const failures = result.failures.map((f) => ({ ...f, property: propertyText(f.property) }));
  return { inputs: toWire(result.inputs ?? raw), failures };
}

/**
 * Pulumi `diff`, from the stored outputs to the checked inputs. Where the
 * changes are (`build.steps[1].run`) is printed as a line of the plugin's
 * output: the Node dynamic-provider plugin passes the engine only `changes`,
 * `replaces` and `deleteBeforeReplace` (docs/pulumi-provider.md#per-call-semantics),
 * so a detailed diff cannot reach the plan itself, and without this line the
 * preview would only say that `build` changed.
 */
export async function diff(
  typeName: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<{ changes: boolean; replaces: string[]; deleteBeforeReplace: boolean }> {
  const inputs = withoutProvider(news);
  const result = await lifecycleOf(typeName).diff(withoutProvider(olds), inputs, {
    isUnknown,
    baseDir: programDir(),
  });
  if (result.changes) {
    const paths = (
      result.paths?.length ? result.paths : [...result.replaces, ...result.updates]
    ).map(propertyText);
    const kind = result.replaces.length > 0 ? "replace" : "update in place";
    console.log(redact(`${resourceLabel(typeName, inputs)}: plan: ${kind} (${paths.join(", ")})`));
  }
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
  const args = withoutProvider(inputs);
  const ctx = context(settings, resourceLabel(typeName, args));
  const { id, outputs } = await timed(
    ctx,
    (created) => `created ${created.id}`,
    () => lifecycleOf(typeName).create(args, ctx),
  );
  return { id, outs: toWire(outputs) };
}

/**
 * Pulumi `read` (refresh, and `import` where no state exists yet: empty props
 * read from the id alone). An empty id means the resource is gone.
 */
export async function read(
  typeName: string,
  settings: ProviderSettings | undefined,
  id: string,
  props: Record<string, unknown>,
): Promise<{ id: string; props: Record<string, unknown> }> {
  const olds = withoutProvider(props);
  const found = await tracked(() =>
    lifecycleOf(typeName).read(
      id,
      Object.keys(olds).length > 0 ? olds : undefined,
      context(settings, resourceLabel(typeName, olds, id)),
    ),
  );
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
  const args = withoutProvider(news);
  const ctx = context(settings, resourceLabel(typeName, args, id));
  const outs = await timed(
    ctx,
    () => "updated",
    () => lifecycleOf(typeName).update(id, withoutProvider(olds), args, ctx),
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
  const state = withoutProvider(olds);
  const ctx = context(settings, resourceLabel(typeName, state, id));
  await timed(
    ctx,
    () => "deleted",
    () => lifecycleOf(typeName).delete(id, state, ctx),
  );
}
