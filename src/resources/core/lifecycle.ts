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

/** The result of `check`: the normalised inputs, or every failure found. */
export interface CheckResult<I> {
  /** Normalised inputs (defaults applied). Present when there are no failures. */
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
  /** True when the old resource must be deleted before the new one is created. */
  deleteBeforeReplace?: boolean;
}

/** What every lifecycle method receives besides its inputs. */
export interface ResourceContext {
  /** Endpoints and credentials; never stored in inputs or outputs. */
  config: ResolvedConfig;
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

/**
 * The lifecycle of one resource type, with inputs `I` and outputs `O`.
 * Outputs always include every input (adapters store them together).
 */
export interface ResourceLifecycle<I, O extends object> {
  /** The type name, e.g. `Template`. */
  readonly typeName: string;
  /** Validates and normalises raw inputs, returning every failure with its path. Never calls the service. */
  check(news: unknown, options?: CheckOptions): CheckResult<I>;
  /**
   * Compares the stored outputs with new (checked) inputs. Never calls the
   * service; it may read local files (content hashes), hence the promise.
   */
  diff(olds: O, news: I, options?: CheckOptions): DiffResult | Promise<DiffResult>;
  /** Creates the resource; all or nothing: a failure leaves nothing behind. */
  create(inputs: I, ctx: ResourceContext): Promise<{ id: string; outputs: O }>;
  /** Reads the current state; `undefined` when the resource no longer exists. */
  read(id: string, olds: O, ctx: ResourceContext): Promise<{ id: string; outputs: O } | undefined>;
  /** Applies an in-place change. */
  update(id: string, olds: O, news: I, ctx: ResourceContext): Promise<O>;
  /** Deletes the resource; already gone counts as success. */
  delete(id: string, olds: O, ctx: ResourceContext): Promise<void>;
}
