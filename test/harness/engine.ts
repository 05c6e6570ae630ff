/**
 * The simulated Pulumi engine: step generation for registrations (Check and
 * Diff one at a time), same / create / update / replace steps, deletes in
 * dependency antichains, refresh and destroy, over the harness state file.
 * The rules are those of docs/pulumi-provider.md#per-call-semantics.
 *
 * @module
 */
import { SandboxIacError } from "../../src/errors";
import { forEachBounded } from "./concurrency";
import type { DynamicProviderPlugin } from "./plugin";
import type { Operation, OperationKind } from "./result";
import {
  annotateSecrets,
  downgradeResourceRefs,
  stripSecrets,
  wireEqual,
  type WireMap,
} from "./secrets";
import type { HarnessState, ResourceOptions, ResourceRecord } from "./state";

/** One dynamic-resource registration, as the program sent it. */
export interface Registration {
  urn: string;
  type: string;
  name: string;
  /** Parent URN; empty for children of the root stack. */
  parent: string;
  /** Inputs in wire form (sig-wrapped secrets, the unknown sentinel in preview). */
  inputs: WireMap;
  dependencies: string[];
  options: ResourceOptions;
}

/** Options of {@link Engine}. */
export interface EngineOptions {
  /** The configured plugin, started on first use. */
  plugin: () => Promise<DynamicProviderPlugin>;
  prior: HarnessState;
  /** Plan only: no Create, Update or Delete calls, and the state does not change. */
  preview: boolean;
  /** Most steps in flight at once. */
  parallel: number;
}

type Plan =
  | { kind: "create"; inputs: WireMap }
  | { kind: "same" | "update"; inputs: WireMap; old: ResourceRecord }
  | { kind: "replace"; inputs: WireMap; old: ResourceRecord; deleteBeforeReplace: boolean };

const plain = (v: WireMap): WireMap => stripSecrets(v);
const nameOf = (urn: string): string => urn.split("::").pop() ?? urn;

/** Simulates the engine for one command over the prior state. */
export class Engine {
  /** Steps in the order they happened (in preview: would happen). */
  readonly operations: Operation[] = [];
  /** One line per failed step. */
  readonly errors: string[] = [];
  private readonly current = new Map<string, ResourceRecord>();
  private pending: ResourceRecord[];
  private readonly registered = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: EngineOptions) {
    for (const r of opts.prior.resources) if (!r.pendingDelete) this.current.set(r.urn, r);
    this.pending = opts.prior.resources.filter((r) => r.pendingDelete);
  }

  /** The state to save: registrations, then untouched old resources, then pending deletes. */
  state(): HarnessState {
    if (this.opts.preview) return this.opts.prior;
    return {
      resources: [
        ...this.current.values(),
        ...this.pending.map((r) => ({ ...r, pendingDelete: true })),
      ],
    };
  }

  /** Handles one registration and returns what the engine answers the program. */
  async register(reg: Registration): Promise<{ id: string; outputs: WireMap }> {
    if (this.registered.has(reg.urn)) {
      throw this.fail(
        "register",
        reg.urn,
        new SandboxIacError(
          "already_exists",
          `duplicate resource URN ${reg.urn}: give each resource a unique name`,
          { operation: "register" },
        ),
      );
    }
    this.registered.add(reg.urn);
    const news = downgradeResourceRefs(reg.inputs);
    // Step generation handles one registration at a time; the step itself runs concurrently.
    const plan = await this.serially(() => this.plan(reg, news));
    const record = await this.apply(reg, plan);
    return { id: record.id, outputs: record.outputs };
  }

  /** End of `up`: deletes replaced resources, pending deletes and resources no longer in the program. */
  async finishUp(): Promise<void> {
    const gone = [...this.current.values()].filter((r) => !this.registered.has(r.urn));
    await this.deleteAll([...this.pending, ...gone]);
  }

  /** `destroy`: deletes everything in dependency antichains. */
  async destroy(): Promise<void> {
    await this.deleteAll([...this.pending, ...this.current.values()]);
  }

  /** `refresh`: concurrent `Read`s; an empty ID drops the resource, returned inputs replace the stored ones. */
  async refresh(): Promise<void> {
    const records = [...this.current.values(), ...this.pending];
    const errors = await forEachBounded(records, this.opts.parallel, async (old) => {
      const plugin = await this.opts.plugin();
      const started = performance.now();
      const read = await plugin
        .read(old.urn, old.id, plain(old.outputs), plain(old.inputs))
        .catch((e: unknown) => {
          throw this.fail("read", old.urn, e);
        });
      if (!read.id) {
        this.forget(old);
        return this.record("refresh-deleted", old, performance.now() - started);
      }
      const inputs = read.inputs ? annotateSecrets(read.inputs, old.inputs) : old.inputs;
      const outputs = annotateSecrets(read.outputs, inputs, old.options.additionalSecretOutputs);
      const changed = !wireEqual(plain(outputs), plain(old.outputs));
      Object.assign(old, { id: read.id, inputs, outputs });
      this.record(changed ? "refresh-update" : "same", old, performance.now() - started);
    });
    if (errors.length > 0) throw errors[0];
  }

  private async plan(reg: Registration, news: WireMap): Promise<Plan> {
    const plugin = await this.opts.plugin();
    const old = this.current.get(reg.urn);
    const check = async (olds: WireMap, inputs: WireMap): Promise<WireMap> => {
      const checked = await plugin
        .check(reg.urn, plain(olds), plain(inputs))
        .catch((e: unknown) => {
          throw this.fail("check", reg.urn, e);
        });
      // The plugin cannot see secrets; the engine puts them back on the checked inputs.
      return annotateSecrets(checked, inputs);
    };
    if (!old) return { kind: "create", inputs: await check({}, news) };

    const ignored = { ...news };
    for (const key of reg.options.ignoreChanges ?? []) {
      if (key in old.inputs) ignored[key] = old.inputs[key]!;
      else delete ignored[key];
    }
    const inputs = await check(old.inputs, ignored);
    const diff = await plugin
      .diff(reg.urn, old.id, plain(old.outputs), plain(inputs), plain(old.inputs))
      .catch((e: unknown) => {
        throw this.fail("diff", reg.urn, e);
      });
    const changedKeys = changedTopLevelKeys(plain(old.inputs), plain(inputs));
    // UNKNOWN means the engine compares the inputs itself, `__provider` included.
    const changes = diff.changes ?? changedKeys.length > 0;
    if (!changes) return { kind: "same", inputs, old };
    const roc = reg.options.replaceOnChanges ?? [];
    const forced = changedKeys.some((k) => roc.includes(k) || roc.includes("*"));
    if (diff.replaces.length === 0 && !forced) return { kind: "update", inputs, old };
    // A replacement recomputes defaults: Check again with empty olds.
    return {
      kind: "replace",
      inputs: await check({}, ignored),
      old,
      deleteBeforeReplace: diff.deleteBeforeReplace || reg.options.deleteBeforeReplace === true,
    };
  }

  private async apply(reg: Registration, plan: Plan): Promise<ResourceRecord> {
    const plugin = await this.opts.plugin();
    const started = performance.now();
    const base = {
      urn: reg.urn,
      type: reg.type,
      dependencies: reg.dependencies,
      options: reg.options,
      ...(reg.parent ? { parent: reg.parent } : {}),
    };
    const annotate = (outputs: WireMap): WireMap =>
      annotateSecrets(outputs, plan.inputs, reg.options.additionalSecretOutputs);
    let record: ResourceRecord;
    if (plan.kind === "same") {
      // A "same" step keeps the old ID, outputs and `__provider`, and stores the new inputs.
      record = { ...base, id: plan.old.id, inputs: plan.inputs, outputs: plan.old.outputs };
    } else if (plan.kind === "update") {
      const outputs = this.opts.preview
        ? plan.inputs
        : await plugin
            .update(
              reg.urn,
              plan.old.id,
              plain(plan.old.outputs),
              plain(plan.inputs),
              plain(plan.old.inputs),
            )
            .catch((e: unknown) => {
              throw this.fail("update", reg.urn, e);
            });
      record = { ...base, id: plan.old.id, inputs: plan.inputs, outputs: annotate(outputs) };
    } else {
      if (plan.kind === "replace" && plan.deleteBeforeReplace) {
        await this.deleteOne(plan.old);
      }
      // In preview the engine answers the inputs as outputs; output-only keys stay unknown.
      const created = this.opts.preview
        ? { id: "", outputs: plan.inputs }
        : await plugin.create(reg.urn, plain(plan.inputs)).catch((e: unknown) => {
            throw this.fail(plan.kind === "replace" ? "replace" : "create", reg.urn, e);
          });
      record = { ...base, id: created.id, inputs: plan.inputs, outputs: annotate(created.outputs) };
      if (plan.kind === "replace" && !plan.deleteBeforeReplace) this.pending.push(plan.old);
    }
    this.current.delete(reg.urn);
    this.current.set(reg.urn, record);
    this.record(plan.kind, record, plan.kind === "same" ? undefined : performance.now() - started);
    return record;
  }

  /** Deletes `records` dependants first, one antichain at a time, each bounded in parallel. */
  private async deleteAll(records: ResourceRecord[]): Promise<void> {
    let remaining = records;
    while (remaining.length > 0) {
      const dependedOn = new Set(remaining.flatMap((r) => [...r.dependencies, r.parent ?? ""]));
      let wave = remaining.filter((r) => !dependedOn.has(r.urn));
      if (wave.length === 0) wave = remaining; // a dependency cycle: nothing better to do
      const errors = await forEachBounded(wave, this.opts.parallel, (r) => this.deleteOne(r));
      if (errors.length > 0) throw errors[0];
      remaining = remaining.filter((r) => !wave.includes(r));
    }
  }

  private async deleteOne(old: ResourceRecord): Promise<void> {
    if (old.options.protect) {
      throw this.fail(
        "delete",
        old.urn,
        new SandboxIacError(
          "permission_denied",
          "the resource is protected: set protect to false and run up before deleting it",
          { operation: "delete" },
        ),
      );
    }
    let durationMs: number | undefined;
    if (!this.opts.preview && !old.options.retainOnDelete) {
      const plugin = await this.opts.plugin();
      const started = performance.now();
      await plugin
        .delete(old.urn, old.id, plain(old.outputs), plain(old.inputs))
        .catch((e: unknown) => {
          throw this.fail("delete", old.urn, e);
        });
      durationMs = performance.now() - started;
    }
    if (!this.opts.preview) this.forget(old);
    this.record("delete", old, durationMs);
  }

  private forget(old: ResourceRecord): void {
    if (this.current.get(old.urn) === old) this.current.delete(old.urn);
    this.pending = this.pending.filter((r) => r !== old);
  }

  /** `durationMs`: how long the step's provider calls took, as the CLI shows it ("created (12s)"). */
  private record(op: OperationKind, r: { urn: string; type: string }, durationMs?: number): void {
    this.operations.push({
      op,
      urn: r.urn,
      type: r.type,
      name: nameOf(r.urn),
      ...(durationMs !== undefined ? { durationMs: Math.round(durationMs) } : {}),
    });
  }

  private fail(step: string, urn: string, cause: unknown): SandboxIacError {
    const message = cause instanceof Error ? cause.message : String(cause);
    this.errors.push(`${step} of ${urn} failed: ${message}`);
    return SandboxIacError.is(cause)
      ? cause
      : new SandboxIacError("internal", message, { operation: step, resourceId: urn, cause });
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function changedTopLevelKeys(olds: WireMap, news: WireMap): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  return [...keys].filter((k) => !wireEqual(olds[k], news[k]));
}
