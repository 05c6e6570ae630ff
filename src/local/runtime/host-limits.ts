/**
 * The share of the host's kernel-wide resources all sandboxes together may
 * take (memory, pids, PTYs), read from the host once at start, so that no
 * number of sandboxes can exhaust what the host and the service need.
 *
 * @module
 */
import * as fs from "node:fs/promises";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Memory a sandbox gets when its template names none: the figure the default `--max-sandboxes` divides by. */
const TYPICAL_SANDBOX_MEMORY_MB = 512;
/** Fewest PTYs a sandbox may open, whatever the number of sandboxes. */
const MIN_SANDBOX_PTYS = 16;
/** Most PTYs a sandbox may open. */
const MAX_SANDBOX_PTYS = 256;

/** What the sandboxes of a host may take together, and each one's PTYs. */
export interface HostLimits {
  /** Memory limit of the cgroup holding every sandbox: the host's memory minus its headroom. */
  sandboxesMemoryBytes: number;
  /** pids limit of the cgroup holding every sandbox: `kernel.pid_max` (or `kernel.threads-max`, if lower) minus its headroom. */
  sandboxesPidsMax: number;
  /** The default of `serve --max-sandboxes`: how many sandboxes of typical size the memory holds. */
  defaultMaxSandboxes: number;
  /** PTYs the host lets devpts instances other than its own open (`kernel.pty.max - kernel.pty.reserve`). */
  sharedPtys: number;
  /** `fs.file-max`: the host's open files, a table every process shares (root is exempt). */
  fileMax: number;
}

/**
 * Kernel memory an open file costs, charged to its sandbox's memory cgroup
 * (its `struct file` and descriptor slot: about 250 bytes measured on 6.18;
 * the lower figure errs towards warning).
 */
const OPEN_FILE_BYTES = 200;

/**
 * A warning when the sandboxes' memory can hold more open files than the
 * host's `fs.file-max`: their files are bounded by their memory only, so one
 * of them could fill the table, and then other sandboxes and unprivileged
 * host processes get ENFILE. `undefined` when the table is big enough.
 */
export function fileTableWarning(limits: HostLimits): string | undefined {
  const files = Math.floor(limits.sandboxesMemoryBytes / OPEN_FILE_BYTES);
  if (files <= limits.fileMax) return undefined;
  return `runtime: fs.file-max (${limits.fileMax}) is below the ${files} open files the sandboxes' memory can hold (a sandbox's open files are bounded by its memory, about ${OPEN_FILE_BYTES} bytes each): one sandbox can fill the host's file table, and then other sandboxes and unprivileged host processes get ENFILE (root and this service are exempt); raise it, e.g. sysctl -w fs.file-max=9223372036854775807 as systemd does by default, so that memory alone bounds open files`;
}

/**
 * Reads the host's figures. Headroom: an eighth of the memory (at least
 * 1 GiB) and a quarter of the pids (at least 4096) stay the host's;
 * `kernel.pty.reserve` PTYs are the host's own devpts's by the kernel's rule.
 */
export async function readHostLimits(): Promise<HostLimits> {
  const memTotal = await readMemTotal();
  // Every thread takes a pid, and the host's thread table may be the smaller of the two.
  const pidMax = Math.min(
    await readNumber("/proc/sys/kernel/pid_max", 32_768),
    await readNumber("/proc/sys/kernel/threads-max", Number.MAX_SAFE_INTEGER),
  );
  const ptyMax = await readNumber("/proc/sys/kernel/pty/max", 4096);
  const ptyReserve = await readNumber("/proc/sys/kernel/pty/reserve", 1024);
  const fileMax = await readNumber("/proc/sys/fs/file-max", Number.MAX_SAFE_INTEGER);
  const sandboxesMemoryBytes = Math.max(256 * MIB, memTotal - Math.max(GIB, memTotal / 8));
  const roundedMemory = Math.floor(sandboxesMemoryBytes / MIB) * MIB;
  return {
    sandboxesMemoryBytes: roundedMemory,
    sandboxesPidsMax: Math.max(1024, pidMax - Math.max(4096, Math.floor(pidMax / 4))),
    defaultMaxSandboxes: Math.max(1, Math.floor(roundedMemory / (TYPICAL_SANDBOX_MEMORY_MB * MIB))),
    sharedPtys: Math.max(0, ptyMax - ptyReserve),
    fileMax,
  };
}

/**
 * PTYs one sandbox may open (its devpts's `max=`): the shared PTYs divided
 * among `maxSandboxes`, within [{@link MIN_SANDBOX_PTYS}, {@link MAX_SANDBOX_PTYS}].
 */
export function ptysPerSandbox(limits: HostLimits, maxSandboxes: number): number {
  const share = Math.floor(limits.sharedPtys / Math.max(1, maxSandboxes));
  return Math.min(MAX_SANDBOX_PTYS, Math.max(MIN_SANDBOX_PTYS, share));
}

async function readMemTotal(): Promise<number> {
  const text = await fs.readFile("/proc/meminfo", "utf8").catch(() => "");
  const kib = /^MemTotal:\s+(\d+)\s+kB/m.exec(text)?.[1];
  return kib === undefined ? 4 * GIB : Number(kib) * 1024;
}

async function readNumber(file: string, fallback: number): Promise<number> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const n = Number.parseInt(text.trim(), 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
