/**
 * `volumeMounts` of a sandbox create: checked and resolved to host
 * directories before anything starts, so bad input changes nothing.
 *
 * @module
 */
import * as path from "node:path";
import { AGENT_MOUNT_DIR, AGENT_RUN_DIR_IN_SANDBOX } from "../../../wire/sandbox-paths";
import { serviceError } from "../http";
import type { VolumeStore } from "./store";

/** A mount of the sandbox record: the wire pair plus the host directory. */
export interface ResolvedVolumeMount {
  name: string;
  path: string;
  volumeID: string;
  /** Absolute host path of the volume's content. */
  source: string;
}

/** Paths a volume may not be mounted at or under: the kernel's and the agent's. */
const RESERVED = ["/proc", "/dev", "/sys", AGENT_MOUNT_DIR, AGENT_RUN_DIR_IN_SANDBOX];

/** Checks `raw` (the create body's `volumeMounts`) and resolves each volume by name. */
export function resolveVolumeMounts(
  store: VolumeStore,
  raw: ReadonlyArray<{ name: string; path: string }> | null | undefined,
): ResolvedVolumeMount[] {
  const out: ResolvedVolumeMount[] = [];
  (raw ?? []).forEach((m, i) => {
    const field = `body.volumeMounts.${i}`;
    const p = m.path;
    if (!p.startsWith("/") || path.posix.normalize(p) !== p.replace(/\/+$/, "") || p === "/")
      throw serviceError(
        "invalid_argument",
        `${field}.path: must be an absolute, normalised path other than '/', got ${JSON.stringify(p)}; e.g. /mnt/data`,
      );
    const target = p.replace(/\/+$/, "");
    const reserved = RESERVED.find((r) => target === r || target.startsWith(`${r}/`));
    if (reserved)
      throw serviceError(
        "invalid_argument",
        `${field}.path: ${JSON.stringify(p)} is inside ${reserved}, which the sandbox needs; mount the volume elsewhere, e.g. /mnt/${m.name}`,
      );
    const clash = out.find(
      (o) =>
        o.path === target || o.path.startsWith(`${target}/`) || target.startsWith(`${o.path}/`),
    );
    if (clash)
      throw serviceError(
        "invalid_argument",
        `${field}.path: ${JSON.stringify(p)} collides with the mount of volume '${clash.name}' at ${clash.path}; give each volume its own, non-nested path`,
      );
    const v = store.byName(m.name);
    if (!v)
      throw serviceError(
        "invalid_argument",
        `${field}.name: volume '${m.name}' not found; create it first (POST /volumes) or fix the name`,
      );
    out.push({
      name: m.name,
      path: target,
      volumeID: v.volumeID,
      source: store.dataPath(v.volumeID),
    });
  });
  return out;
}
