/**
 * What the sandboxes side asks of templates: the registry's interface and the
 * ready build a template id or name resolves to. A leaf of the templates
 * side, so the sandbox manager can name these types without loading the
 * catalog and the build runner.
 *
 * @module
 */
import type { BuildOutput } from "./model";

/** A ready template build, as sandboxes need it. */
export interface ResolvedTemplate extends BuildOutput {
  templateID: string;
  buildID: string;
  /** The template's name (`ns/alias` or `alias`), when it has one. */
  alias?: string;
  names: string[];
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  envdVersion: string;
}

/** What the sandboxes side asks of templates. */
export interface TemplateRegistry {
  /**
   * Resolves a template id, `alias`, `alias:tag`, `ns/alias[:tag]` or snapshot
   * id to its ready build; undefined when unknown or not built yet.
   */
  resolve(idOrName: string): ResolvedTemplate | undefined;
  /** Records that a sandbox was started from the template (spawn count, last spawn). */
  markSpawned(templateID: string): void;
  /**
   * Registers `listener`, awaited before a layer no template uses any more is
   * deleted (a template or snapshot was deleted): whoever keeps sandboxes
   * started on it ahead of time must let go of them first.
   * @default no listener
   */
  onLayerRelease?(listener: (layerId: string) => Promise<void>): void;
}
