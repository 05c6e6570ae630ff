/**
 * Names and fixed values used only by the Linux sandbox runtime: data-dir
 * layout, cgroup names, capabilities and bounds.
 *
 * @module
 */
import { DEFAULT_USER, DEFAULT_USER_HOME } from "../../wire/envd";
import { SANDBOX_ID_PATTERN } from "../../wire/ids";

/** Sub-directory of the data dir holding immutable layers. */
export const LAYERS_DIR = "layers";
/** Sub-directory of the data dir holding the sandboxes' writable layers. */
export const SANDBOXES_DIR = "sandboxes";
/** The id of the built-in base layer. */
export const BASE_LAYER_ID = "base";
/** Inside a layer: the directory overlaid on `/`. */
export const LAYER_ROOT = "root";
/** Inside a layer: the directory overlaid on `/usr`. */
export const LAYER_USR = "usr";
/** File in the base layer recording the recipe version it was built with. */
export const BASE_VERSION_FILE = ".sandbox-iac-base-version";
/** Name of the cgroup directory grouping every sandbox of the runtime. */
export const CGROUP_GROUP = "sandbox-iac";

/** Ids of sandboxes and layers: a sandbox ID's grammar, as they also name hostnames. */
export const ID_PATTERN = SANDBOX_ID_PATTERN;
/** Longest accepted sandbox or layer id (it is also the hostname). */
export const MAX_ID_LENGTH = 63;

/** Processes (and threads) allowed in one sandbox: contains fork bombs. */
export const SANDBOX_PIDS_MAX = 1024;
/** The CFS period used to express the CPU quota, in microseconds. */
export const CPU_PERIOD_US = 100_000;
/** `oom_score_adj` of the agent so that the kernel picks a runaway command first. */
export const AGENT_OOM_SCORE_ADJ = -500;

/**
 * How long `start()` waits for the agent to answer `GET /health` while the
 * sandbox uses no CPU at all (stuck, not slow; see waitForHealth).
 */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
/**
 * Longest `start()` waits for the agent, progress or not. Generous: Node's
 * boot takes about 0.1 s of CPU, so only an agent that spins without
 * answering comes near it; clients give up sooner on their own (the e2b SDK
 * after 60 s by default).
 */
export const START_LIMIT_MS = 300_000;
/** How often the wait for the agent reads the sandbox's CPU time. */
export const START_PROGRESS_SAMPLE_MS = 250;
/** How often `start()` polls the agent's health route. */
export const HEALTH_POLL_INTERVAL_MS = 5;
/** Largest `agent.log` written per start; later output is dropped. */
export const AGENT_LOG_MAX_BYTES = 1024 * 1024;
/** Bytes of the sandbox's output kept in memory for error messages. */
export const AGENT_LOG_TAIL_BYTES = 4096;
/** How long `freeze()` waits for the kernel to report every task frozen. */
export const FREEZE_TIMEOUT_MS = 10_000;
/** How long `stop()` waits for the processes of a sandbox to go away. */
export const STOP_TIMEOUT_MS = 10_000;

/**
 * Capabilities kept by root inside a sandbox: Docker's default set. Notably
 * absent: SYS_ADMIN (mount, escaping binds), SYS_PTRACE, SYS_MODULE, NET_ADMIN.
 * MKNOD is harmless because every filesystem a sandbox can write is `nodev`.
 */
export const SANDBOX_CAPABILITIES = [
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_FSETID",
  "CAP_FOWNER",
  "CAP_MKNOD",
  "CAP_NET_RAW",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETFCAP",
  "CAP_SETPCAP",
  "CAP_NET_BIND_SERVICE",
  "CAP_SYS_CHROOT",
  "CAP_KILL",
  "CAP_AUDIT_WRITE",
] as const;

/** `PATH` given to the agent. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The unprivileged user every sandbox has, with its ids. */
export const SANDBOX_USER = {
  name: DEFAULT_USER,
  uid: 1000,
  gid: 1000,
  home: DEFAULT_USER_HOME,
  shell: "/bin/bash",
} as const;

/**
 * The Python 3 of the distribution (Debian's `python3`, with `python3-seccomp`).
 * An absolute path: a `python3` earlier on `PATH` (pyenv, venvs) lacks the
 * distribution's modules.
 */
export const SYSTEM_PYTHON = "/usr/bin/python3";

/**
 * Host directory over which each sandbox's private mount namespace stacks a
 * tmpfs holding its staging mounts (disk image, idmapped layers, merged root).
 * World-traversable so that bubblewrap, running as the sandbox's host uid,
 * can reach the merged root; the tmpfs exists only inside that namespace.
 */
export const STAGING_DIR = "/run/sandbox-iac";
/** Host directory of the cross-process slot claims (`<STAGING_DIR>/slots/<n>`). */
export const SLOTS_DIR = `${STAGING_DIR}-slots`;

/** First host uid/gid of the sandbox ranges: far above any account or `/etc/subuid` range. */
export const SANDBOX_ID_BASE = 0x4000_0000;
/** Ids per sandbox: inside 0..65535 map to `SANDBOX_ID_BASE + slot * 65536 + id`. */
export const SANDBOX_ID_RANGE = 65_536;
/** Slots (concurrent sandboxes on one host): one /30 each in {@link SANDBOX_SUBNET}. */
export const MAX_SLOTS = 16_384;
/** The /16 sandboxes' point-to-point links are carved from (one /30 per slot). */
export const SANDBOX_SUBNET = "10.200.0.0/16";
/** Prefix of the host side of each sandbox's veth (`sbx<slot>`). */
export const VETH_PREFIX = "sbx";
/** Prefix of the nftables table of one service process (`<prefix><pid>`). */
export const NFT_TABLE_PREFIX = "sandbox_iac_";

/** Soft and hard RLIMIT_NOFILE of every process in a sandbox. */
export const SANDBOX_NOFILE = 4096;
/**
 * Size of a sandbox's disk (an ext4 image holding its writable layer) when
 * the spec names none. The image is sparse: an empty one takes under 1 MB.
 */
export const DEFAULT_DISK_SIZE_MB = 4096;
/** Smallest disk accepted: the filesystem's own metadata needs a few MiB. */
export const MIN_DISK_SIZE_MB = 16;

/**
 * Files under `/proc` hidden behind `/dev/null` (runc's masked paths) and
 * directories made read-only (runc's read-only paths).
 */
export const PROC_MASKED_FILES = [
  "/proc/kcore",
  "/proc/keys",
  "/proc/timer_list",
  "/proc/sched_debug",
  "/proc/latency_stats",
  "/proc/interrupts",
] as const;
/** See {@link PROC_MASKED_FILES}. */
export const PROC_READONLY_PATHS = [
  "/proc/sys",
  "/proc/sysrq-trigger",
  "/proc/irq",
  "/proc/bus",
  "/proc/fs",
  "/proc/asound",
  "/proc/acpi",
  "/proc/scsi",
] as const;
