/**
 * Descriptors: the one description of each resource and data source that every
 * adapter (Pulumi, Terraform, CDK bindings) derives from. A descriptor holds
 * data only (schemas with field descriptions as zod metadata, change rules,
 * secrets, the replacement constraint) plus the lifecycle or read function.
 * Adapters never restate a field: names, types, descriptions, sensitivity and
 * requires-replace all come from here.
 *
 * Field descriptions are attached with zod's `.meta({ description })` as the
 * LAST call on each field (after `.optional()`, `.nullable()`, refinements), so
 * `field.meta()?.description` and `z.toJSONSchema(schema, { io: "input" })`
 * both publish them. Schemas hold no transforms and no defaults (check changes
 * no value); a field's `@default` behaviour is said in its description.
 *
 * Types are expressible in Terraform's type system: strings, numbers,
 * booleans, lists, string-keyed maps, strict objects, `nullable` strings and
 * string enums. Two unions remain, for Pulumi users: Template step `run`
 * (`string | string[]`, Terraform exposes the list form) and COPY `mode`
 * (`number | octal string`, Terraform exposes the string form).
 *
 * Plan-time values: outputs computed from local files alone (Template
 * `filesHashes`, Provisioner `fileDigest`) come from the lifecycle's optional
 * `planOutputs(inputs, { baseDir })`; an adapter that plans ahead uses those
 * values instead of unknowns, whatever their {@link OutputRule}.
 *
 * @module
 */
import type { ZodObject } from "zod";
import type { ChangeRule, ResourceContext, ResourceLifecycle } from "./lifecycle";

/**
 * How an output behaves when the resource is updated in place:
 * - `stable`: keeps its value (e.g. Template `templateID`); an adapter may copy
 *   it from the prior state into the plan;
 * - `recomputed`: may change with any update (e.g. Provisioner `commandsRun`);
 *   an adapter plans it as unknown whenever an update is planned;
 * - `{ recomputedWith }`: changes only when one of these inputs changes (the
 *   core's `diff` lists it among the updates), e.g. Template `buildID` and
 *   `ref` with `build`, `cpuCount`, `memoryMB`: a tags-only update keeps the
 *   build, so dependents that follow the build (see `core/refs.ts`) are not
 *   planned again.
 */
export type OutputRule = "stable" | "recomputed" | { readonly recomputedWith: readonly string[] };

/**
 * True when an output under `rule` is not known in a plan whose `diff`
 * changes the inputs `changed` in place.
 */
export function recomputedBy(rule: OutputRule, changed: ReadonlySet<string>): boolean {
  if (rule === "stable") return false;
  if (rule === "recomputed") return true;
  return rule.recomputedWith.some((input) => changed.has(input));
}

/**
 * The order of a replacement, stated as data and translated by each adapter
 * (Pulumi: `deleteBeforeReplace`; Terraform deletes first by default and
 * `create_before_destroy` is the user's opt-in).
 */
export interface ReplacementConstraint {
  /** True when the old object must be deleted before its replacement is created. */
  deleteFirst: boolean;
  /** Why, in the user's terms, e.g. "a new snapshot with the same name needs the old one deleted first". */
  reason: string;
  /**
   * Added to the contract: the top-level input whose presence makes the
   * constraint apply (Provisioner: `snapshot`). The lifecycle's `diff` also
   * sets `deleteBeforeReplace` per change, with the same rule.
   * @default the constraint always applies
   */
  onlyWithInput?: string;
}

/** The description of one resource type. */
export interface ResourceDescriptor<I = unknown, O extends object = object> {
  /** Discriminates resources from data sources. */
  readonly kind: "resource";
  /** The core type name in PascalCase, e.g. `Template`; Terraform's is `sandboxiac_<snake_case>`. */
  readonly typeName: string;
  /** One paragraph for generated docs and schemas. */
  readonly description: string;
  /** The schema version of the stored outputs; bump it with a migration in the lifecycle. */
  readonly version: number;
  /** The inputs a user writes (strict object; every field described with metadata). */
  readonly args: ZodObject;
  /**
   * The outputs the service reports, besides the inputs (every field described
   * with metadata). Stored state is the inputs exactly as given plus these.
   */
  readonly outputs: ZodObject;
  /** How a change of each input is applied. A missing input counts as `replace`. */
  readonly changeRules: Readonly<Record<string, ChangeRule>>;
  /** How each output (not input) behaves on an in-place update. */
  readonly outputRules: Readonly<Record<string, OutputRule>>;
  /** Input names whose values are secrets (Pulumi secret, Terraform sensitive). */
  readonly sensitiveInputs: readonly string[];
  /** Output names whose values are secrets. */
  readonly sensitiveOutputs: readonly string[];
  /** The replacement order this resource needs. */
  readonly replacement: ReplacementConstraint;
  /** The lifecycle: check, diff, create, read (also from an id alone, for import), update, delete. */
  readonly lifecycle: ResourceLifecycle<I, O>;
}

/** The description of one data source (a read-only query). */
export interface DataSourceDescriptor<A = unknown, R extends object = object> {
  /** Discriminates data sources from resources. */
  readonly kind: "data";
  /** The core name in camelCase, e.g. `sandbox`; Terraform's is `sandboxiac_<snake_case>`. */
  readonly typeName: string;
  /** One paragraph for generated docs and schemas. */
  readonly description: string;
  /** The arguments (strict object; every field described with metadata). */
  readonly args: ZodObject;
  /** What the query returns, besides the arguments (every field described with metadata). */
  readonly result: ZodObject;
  /** Output names whose values are secrets. */
  readonly sensitiveOutputs: readonly string[];
  /** Runs the query; a thing that does not exist is a `not_found` error. */
  read(args: A, ctx: ResourceContext): Promise<R>;
}

/** Any descriptor, for registries. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDescriptor = ResourceDescriptor<any, any> | DataSourceDescriptor<any, any>;
