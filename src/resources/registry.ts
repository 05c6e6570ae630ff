/**
 * The one registry of descriptors: every resource and data source the
 * adapters serve. Pulumi derives its classes' outputs, secrets and
 * `deleteBeforeReplace` and its lifecycle table from here; the Terraform
 * provider derives its schema. Adding a resource is one line here.
 *
 * @module
 */
import type { AnyDescriptor, DataSourceDescriptor, ResourceDescriptor } from "./core/descriptor";
import { sandboxDataSource } from "./data/sandbox/sandbox.descriptor";
import { sandboxMetricsDataSource } from "./data/sandbox-metrics/sandbox-metrics.descriptor";
import { sandboxesDataSource } from "./data/sandboxes/sandboxes.descriptor";
import { snapshotsDataSource } from "./data/snapshots/snapshots.descriptor";
import { templateDataSource } from "./data/template/template.descriptor";
import { provisionerDescriptor } from "./provisioner/provisioner.descriptor";
import { sandboxReaderDescriptor } from "./sandbox-reader/sandbox-reader.descriptor";
import { secretDescriptor } from "./secret/secret.descriptor";
import { snapshotDescriptor } from "./snapshot/snapshot.descriptor";
import { templateDescriptor } from "./template/template.descriptor";
import { volumeDescriptor } from "./volume/volume.descriptor";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyResource = ResourceDescriptor<any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDataSource = DataSourceDescriptor<any, any>;

/**
 * The resource descriptors by type name, each with its own input and output
 * types, so an adapter that names a type gets that resource's types: a class
 * wired to the wrong name does not compile.
 */
const resourceTypes: {
  readonly Template: typeof templateDescriptor;
  readonly Snapshot: typeof snapshotDescriptor;
  readonly SandboxReader: typeof sandboxReaderDescriptor;
  readonly Provisioner: typeof provisionerDescriptor;
  readonly Volume: typeof volumeDescriptor;
  readonly Secret: typeof secretDescriptor;
} = {
  Template: templateDescriptor,
  Snapshot: snapshotDescriptor,
  SandboxReader: sandboxReaderDescriptor,
  Provisioner: provisionerDescriptor,
  Volume: volumeDescriptor,
  Secret: secretDescriptor,
};

/** The type name of a resource (`Template`, ...). */
export type ResourceTypeName = keyof typeof resourceTypes;

/** The inputs a user writes for resource `K`. */
export type InputsOf<K extends ResourceTypeName> =
  (typeof resourceTypes)[K] extends ResourceDescriptor<infer I, object> ? I : never;

/** The outputs the service reports for resource `K`. */
export type OutputsOf<K extends ResourceTypeName> =
  (typeof resourceTypes)[K] extends ResourceDescriptor<unknown, infer O> ? O : never;

/** Every resource descriptor, in a stable order. */
export const resourceDescriptors: readonly AnyResource[] = Object.values(resourceTypes);

/** Every data source descriptor, in a stable order. */
export const dataSourceDescriptors: readonly AnyDataSource[] = [
  sandboxDataSource,
  sandboxesDataSource,
  sandboxMetricsDataSource,
  templateDataSource,
  snapshotsDataSource,
];

/** Every descriptor, resources first. */
export const allDescriptors: readonly AnyDescriptor[] = [
  ...resourceDescriptors,
  ...dataSourceDescriptors,
];

/** Resource descriptors by type name (`Template`, ...). */
export const resourcesByType: Readonly<Record<string, AnyResource>> = Object.fromEntries(
  resourceDescriptors.map((d) => [d.typeName, d]),
);

/** Data source descriptors by type name (`sandbox`, ...). */
export const dataSourcesByType: Readonly<Record<string, AnyDataSource>> = Object.fromEntries(
  dataSourceDescriptors.map((d) => [d.typeName, d]),
);

/** The resource descriptor of `typeName`; throws when there is none (a bug in an adapter). */
export function resourceDescriptor(typeName: string): AnyResource {
  const found = resourcesByType[typeName];
  if (!found) {
    throw new Error(
      `sandbox-iac has no resource type ${JSON.stringify(typeName)}: known are ${Object.keys(resourcesByType).join(", ")}`,
    );
  }
  return found;
}

/** The data source descriptor of `typeName`; throws when there is none (a bug in an adapter). */
export function dataSourceDescriptor(typeName: string): AnyDataSource {
  const found = dataSourcesByType[typeName];
  if (!found) {
    throw new Error(
      `sandbox-iac has no data source ${JSON.stringify(typeName)}: known are ${Object.keys(dataSourcesByType).join(", ")}`,
    );
  }
  return found;
}

/** The names of a descriptor's outputs besides its inputs, in schema order. */
export function outputNames(descriptor: AnyResource): string[] {
  return Object.keys(descriptor.outputs.shape);
}

/**
 * Whether a replacement of a resource with these inputs deletes first, per
 * its {@link ResourceDescriptor.replacement} constraint.
 */
export function deletesFirst(descriptor: AnyResource, inputs: Record<string, unknown>): boolean {
  const { deleteFirst, onlyWithInput } = descriptor.replacement;
  return deleteFirst && (onlyWithInput === undefined || inputs[onlyWithInput] !== undefined);
}
