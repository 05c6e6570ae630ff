/**
 * Per-sandbox cgroups on cgroup v1 (one hierarchy per controller) and on a
 * pure cgroup v2 host, behind one interface. The runtime picks the flavour at
 * startup with `detectCgroups` (cgroup-detect.ts).
 *
 * @module
 */

/** Limits applied to a sandbox cgroup before anything runs in it. */
export interface CgroupLimits {
  /** CPU cores (CFS quota of `cpuCount` periods per period). */
  cpuCount: number;
  /** Memory (and memory plus swap) limit in bytes. */
  memoryBytes: number;
  /** Process and thread limit. */
  pidsMax: number;
  /**
   * Whether the cgroup is made idle ({@link CgroupDriver.setIdle}). Asked when
   * its CPU settings are written, not before, so a switch made while the
   * cgroup was being made is not lost.
   * @default never idle
   */
  idle?: (() => boolean) | undefined;
}

/** Limits of the cgroup grouping every sandbox, so that all of them together leave the host headroom. */
export interface GroupLimits {
  /** Memory (and memory plus swap) limit in bytes. */
  memoryBytes: number;
  /** Process and thread limit. */
  pidsMax: number;
}

/** Memory figures of a cgroup, in bytes. */
export interface CgroupMemory {
  /** Everything charged, page cache included. */
  usage: number;
  /** Page cache charged to the cgroup. */
  cache: number;
}

/** The cgroup (one per controller on v1) of one sandbox. */
export interface SandboxCgroup {
  /** `cgroup.procs` files the launcher writes its pid into before exec'ing the sandbox. */
  readonly procsFiles: readonly string[];
  /** Freezes every process and resolves once the kernel reports them frozen. */
  freeze(): Promise<void>;
  /** Thaws the cgroup. */
  thaw(): Promise<void>;
  /** SIGKILLs every process, thawing first, and resolves once the cgroup is empty or the deadline passes. */
  killAll(timeoutMs: number): Promise<void>;
  /** Removes the cgroup directories; they must be empty. */
  remove(): Promise<void>;
  /** CPU time consumed so far, in nanoseconds. */
  cpuUsageNs(): Promise<number>;
  /** Current memory figures. */
  memory(): Promise<CgroupMemory>;
}

/** Creates and finds sandbox cgroups of one flavour. */
export interface CgroupDriver {
  /** 1 for the legacy per-controller hierarchies, 2 for the unified hierarchy. */
  readonly version: 1 | 2;
  /** Creates (or reuses) the cgroup `name` with `limits` applied. */
  create(name: string, limits: CgroupLimits): Promise<SandboxCgroup>;
  /** Kills and removes every cgroup whose name starts with `prefix` (left over by a crashed service). */
  removeStale(prefix: string): Promise<void>;
  /**
   * Makes the cgroup `name` idle or not (`cpu.idle`, see `setCpuIdle` in
   * cgroup-files.ts): synchronous, and a no-op for a cgroup not made yet.
   */
  setIdle(name: string, idle: boolean): void;
  /** The names of every sandbox cgroup of the group, whichever service made them. */
  list(): Promise<string[]>;
  /**
   * Removes the cgroup `name` if it is empty, killing nothing: false when a
   * controller's cgroup still holds processes (it and the rest stay).
   */
  removeIfEmpty(name: string): Promise<boolean>;
}
