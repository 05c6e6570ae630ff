/**
 * The provider-neutral resource contract. Every resource (Template, Snapshot,
 * SandboxReader, Provisioner) implements {@link ResourceLifecycle}; the Pulumi
 * dynamic provider and, next, the Terraform provider and CDK constructs are thin
 * adapters over it. Nothing here knows about Pulumi or Terraform.
 *
 * @module
 */
import type { ResolvedConfig } from "../../config";

/** One input problem found by `check`: the dotted property path and why it is wrong. */
export interface CheckFailure {
  /** Dotted path of the input, e.g. `build.steps.2.args`. */
  property: string;
  /** What is wrong, in the project's message template (value, what is allowed, fix). */
  reason: string;
}

/**
 * The result of `check`: the inputs, or every failure found. `check` never
 * changes a value (no lower-casing, no defaults): what it returns is what the
 * user wrote, so an adapter's plan compares like with like. Normalisation
 * happens inside `diff`, `create` and `update`.
 */
export interface CheckResult<I> {
  /** The inputs exactly as given (same values), typed. Present when there are no failures. */
  inputs?: I;
  /** Every failure, not just the first. Empty when the inputs are valid. */
  failures: CheckFailure[];
}

/** How a change to an input is applied. */
export type ChangeRule =
  /** The resource is deleted and created again. */
  | "replace"
  /** The resource is updated in place. */
  | "update"
  /** The field never causes a change by itself (e.g. credentials, display-only). */
  | "ignore";

/** The result of `diff`. */
export interface DiffResult {
  /** True when anything must change. */
  changes: boolean;
  /** Inputs whose change forces a replacement. */
  replaces: string[];
  /** Inputs whose change is applied in place. */
  updates: string[];
  /**
   * Where the changes are, deeper than the inputs: dotted paths as
   * {@link CheckFailure.property} writes them (`build.steps.1.run`, a COPY
   * source's new content as `filesHashes.0`). Adapters whose plan cannot show
   * nested changes itself (Pulumi's dynamic provider) print them.
   * @default the changed inputs only
   */
  paths?: string[];
  /** True when the old resource must be deleted before the new one is created. */
  deleteBeforeReplace?: boolean;
}

/** What every lifecycle method receives besides its inputs. */
export interface ResourceContext {
  /** Endpoints and credentials; never stored in inputs or outputs. */
  config: ResolvedConfig;
  /**
   * The directory relative local paths (a Template COPY `src`, a Provisioner
   * `files[].source`) are resolved against. Pulumi: the program directory;
   * Terraform: the module directory. Resources never read `process.cwd()`.
   */
  baseDir: string;
  /** Where progress (build logs, command output) goes as it happens. */
  log: (line: string) => void;
  /** Aborts the operation. */
  signal?: AbortSignal;
}

/** Options of `check` that adapters set. */
export interface CheckOptions {
  /**
   * True for values that are not known yet (Pulumi preview passes a sentinel
   * for outputs of resources not created yet). Such values are not validated.
   * @default no value is unknown
   */
  isUnknown?: (value: unknown) => boolean;
}

/** Options of `diff` that adapters set. */
export interface DiffOptions extends CheckOptions {
  /** The directory relative local paths are resolved against (see {@link ResourceContext.baseDir}). */
  baseDir: string;
}

/** Options of `planOutputs`. */
export interface PlanOptions {
  /** The directory relative local paths are resolved against (see {@link ResourceContext.baseDir}). */
  baseDir: string;
}

/**
 * The lifecycle of one resource type, with inputs `I` and outputs `O`.
 * Outputs always include every input (adapters store them together).
 */
export interface ResourceLifecycle<I, O extends object> {
  /** The type name, e.g. `Template`. */
  readonly typeName: string;
  /**
   * Validates raw inputs without changing any value, returning every failure
   * with its path. Unknown values (see {@link CheckOptions.isUnknown}) are not
   * validated. Never calls the service, never reads local files.
   */
  check(news: unknown, options?: CheckOptions): CheckResult<I>;
  /**
   * Compares the stored outputs with new (checked) inputs, both normalised
   * first (so `"My-App"` and `"my-app"` are the same name). Never calls the
   * service; it may read local files below `options.baseDir` (content hashes),
   * hence the promise.
   */
  diff(olds: O, news: I, options: DiffOptions): DiffResult | Promise<DiffResult>;
  /**
   * The outputs that apply will produce from local files alone, known before
   * anything is created (e.g. Template `filesHashes`, Provisioner
   * `fileDigest`). Pure: reads local files below `options.baseDir`, never
   * calls the service. `create` and `update` produce exactly these values
   * when the files do not change in between. Adapters that plan ahead
   * (Terraform) put them in the plan instead of unknowns. Resources without
   * such outputs leave it out.
   */
  planOutputs?(inputs: I, options: PlanOptions): Promise<Partial<O>>;
  /** Creates the resource; all or nothing: a failure leaves nothing behind. */
  create(inputs: I, ctx: ResourceContext): Promise<{ id: string; outputs: O }>;
  /**
   * Reads the current state; `undefined` when the resource no longer exists.
   * With `olds` undefined (import from an id alone) it reconstructs from the
   * service what it can; each resource's `.md` says what it cannot recover,
   * and a resource that cannot be imported at all throws `unsupported`.
   */
  read(
    id: string,
    olds: O | undefined,
    ctx: ResourceContext,
  ): Promise<{ id: string; outputs: O } | undefined>;
  /** Applies an in-place change. */
  update(id: string, olds: O, news: I, ctx: ResourceContext): Promise<O>;
  /** Deletes the resource; already gone counts as success. */
  delete(id: string, olds: O, ctx: ResourceContext): Promise<void>;
}
