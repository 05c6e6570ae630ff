/**
 * The `Snapshot` dynamic resource: a named snapshot of a sandbox, usable as a
 * template. See `src/resources/snapshot/snapshot.md`.
 *
 * @module
 */
import type { SnapshotArgs as SnapshotInputArgs } from "../resources/snapshot/snapshot.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link Snapshot}. */
export type SnapshotArgs = ResourceArgs<SnapshotInputArgs>;

/** A snapshot of a sandbox. Any input change takes a new snapshot (replace). */
export class Snapshot extends dynamicResourceClass("Snapshot") {}
