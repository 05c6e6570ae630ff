/**
 * The `Volume` dynamic resource: persistent storage mounted into sandboxes by
 * name. See `src/resources/volume/volume.md`.
 *
 * @module
 */
import type { VolumeArgs as VolumeInputArgs } from "../resources/volume/volume.args";
import type { ResourceArgs } from "./inputs";
import { dynamicResourceClass } from "./resource-class";

/** Args of {@link Volume}. */
export type VolumeArgs = ResourceArgs<VolumeInputArgs>;

/** A persistent volume with optional seed files. A new name replaces it. */
export class Volume extends dynamicResourceClass("Volume") {}
