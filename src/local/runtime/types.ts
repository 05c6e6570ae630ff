/**
 * The contract between the local control service and the Linux sandbox runtime.
 *
 * The runtime turns a {@link SandboxSpec} into a running, isolated Linux
 * environment (its own user and network namespaces, an idmapped overlay root
 * filesystem on its own disk image, seccomp, cgroup limits) with the
 * in-sandbox agent listening on a Unix socket. It knows
 * nothing about the control API, tokens or timeouts: the control service owns
 * those.
 *
 * Disk layout under the data dir (owned by the runtime):
 * - `layers/<layerId>/{root,usr}`: immutable filesystem layers. A template is an
 *   ordered list of layer ids. `root` is overlaid on `/`, `usr` on `/usr`, with
 *   the host's `/usr` as the lowest `usr` layer (the built-in `base`).
 * - `sandboxes/<sandboxID>/`: the sandbox's disk image `disk.img` (an ext4
 *   filesystem holding its writable layer `upper/`, `work/`) and the agent socket. It survives restarts until `destroy`.
 *
 * @module
 */
import type { SandboxMetricMeasures } from "../../wire/sandbox-metric";
import type { NetworkRules } from "../../wire/egress-transforms";
import type { EgressProxyConfig } from "../../wire/egress-proxy";
import type { LayerCompression } from "./image-layers";
import type { CaptureOptions } from "./layers";

/** What to start. */
export interface SandboxSpec {
  /** The sandbox id, `^[a-z0-9]+$`; also the hostname inside. */
  sandboxID: string;
  /** Layer ids from the lowest (oldest) to the highest; the writable layer goes on top. */
  layers: string[];
  /** CPU cores: the cgroup CPU quota is `cpuCount` cores. */
  cpuCount: number;
  /** Memory limit in MiB (cgroup memory limit). */
  memoryMB: number;
  /**
   * When false nothing the sandbox sends leaves its own network namespace
   * (its ports stay reachable through the service's proxy).
   */
  allowInternetAccess: boolean;
  /**
   * Host directories bind-mounted read-write into the sandbox (volumes).
   * @default [] (nothing mounted)
   */
  binds?: readonly SandboxBind[] | undefined;
  /**
   * Outbound rules on top of {@link allowInternetAccess}: CIDRs (or bare IPv4
   * addresses) and domain entries always allowed, and CIDRs dropped. `allowOut` wins over `denyOut`;
   * private, loopback and link-local ranges stay unreachable either way.
   * @default no extra rules
   */
  network?: NetworkSettings;
  /**
   * Size of the sandbox's disk in MiB (an ext4 image holding its writable
   * layer; writes past it fail with ENOSPC inside). Fixed when the disk is
   * first created; later starts reuse it.
   * @default 4096
   */
  diskSizeMB?: number;
}

/** A host directory mounted read-write at `target` inside a sandbox. */
export interface SandboxBind {
  /** Absolute host path. */
  source: string;
  /** Absolute path inside the sandbox. */
  target: string;
}

/** The outbound settings {@link RuntimeSandbox.setNetwork} takes. */
export interface NetworkSettings {
  allowOut?: string[] | undefined;
  denyOut?: string[] | undefined;
  /** `network.rules`, keys lower-cased (applied by the egress edge). @default none */
  rules?: NetworkRules | undefined;
  /** The SOCKS5 proxy allowed outbound TCP is tunneled through (by the egress edge). @default none */
  egressProxy?: EgressProxyConfig | undefined;
  /** @default the value the sandbox was started with */
  allowInternetAccess?: boolean | undefined;
}

/** What may leave a sandbox's network namespace. */
export interface EgressRules {
  internet: boolean;
  /** CIDR blocks of `allowOut`. */
  allowOut: string[];
  /** Domain entries of `allowOut`, lower-cased (matched by the egress edge). */
  allowDomains: string[];
  denyOut: string[];
  /** `network.rules`, keys lower-cased: requests the egress edge transforms. */
  rules: NetworkRules;
  /** The SOCKS5 proxy its allowed outbound TCP goes through; undefined: straight out. */
  egressProxy?: EgressProxyConfig | undefined;
}

/** Resource usage sampled from the cgroup and the writable layer. */
export interface SandboxStats extends SandboxMetricMeasures {
  /** Unix seconds when sampled. */
  timestampUnix: number;
}

/** A started sandbox. */
export interface RuntimeSandbox {
  readonly sandboxID: string;
  /**
   * Absolute host path of the agent's Unix socket; HTTP/1.1 is served on it.
   * It lives in a host directory only root can write and the sandbox does not
   * see: the agent received the listening socket as an inherited descriptor.
   */
  readonly agentSocket: string;
  /**
   * A descriptor of the agent's `/proc/<pid>` directory (agent-process.ts),
   * through which the service opens a process's stdin pipe the agent names
   * (src/local/proxy/direct-stdin.ts); undefined when it was not found, or
   * once the sandbox stopped.
   */
  readonly agentProcess: number | undefined;
  /**
   * The host uids (and gids) the sandbox's user namespace maps: inside id `n`
   * is host `first + n`. Whatever a process of the sandbox creates (a file, a
   * pipe) is owned by one of them.
   */
  readonly hostIds: { readonly first: number; readonly count: number };
  /** The sandbox's IPv4 address on its link to the host, where its ports are reached. */
  readonly address: string;
  /** Replaces the sandbox's outbound rules (and internet access) while it runs. */
  setNetwork(network: NetworkSettings): Promise<void>;
  /** Resolves when the sandbox's init process has exited (killed, crashed or stopped). */
  readonly exited: Promise<void>;
  /** Freezes every process of the sandbox (cgroup freezer). */
  freeze(): Promise<void>;
  /** Thaws a frozen sandbox. */
  thaw(): Promise<void>;
  /** Kills every process and unmounts; the writable layer stays on disk. */
  stop(): Promise<void>;
  /** Samples resource usage. */
  stats(): Promise<SandboxStats>;
}

/** The Linux sandbox runtime. */
export interface SandboxRuntime {
  /**
   * Starts a sandbox and resolves once its agent answers `GET /health` on the
   * socket. When the sandbox's writable layer already exists (a resume after a
   * pause that lost its processes, or after a restart), it is reused as is.
   */
  start(spec: SandboxSpec): Promise<RuntimeSandbox>;
  /**
   * Copies the writable layer of `sandboxID` into a new immutable layer and
   * returns its id. The caller freezes the sandbox around the call when it runs.
   * With `sinceLastCapture` (a running sandbox), only what changed since its
   * previous such capture, as a layer stacking on the ones captured before.
   */
  captureLayer(sandboxID: string, opts?: CaptureOptions): Promise<string>;
  /** Whether the container image layer of digest `sha256:…` is unpacked in the layer store. */
  hasImageLayer(digest: string): Promise<boolean>;
  /**
   * Unpacks the container image layer `blob` (digest `sha256:…`) into the
   * layer store, once per digest; returns its layer id and whether it was
   * there already.
   */
  importImageLayer(
    digest: string,
    blob: string,
    compression: LayerCompression,
  ): Promise<{ layerId: string; reused: boolean }>;
  /**
   * The layer of E2B's conventions (user `user`, sudo relay, `/etc/hosts`,
   * `/etc/resolv.conf`, the agent's mount points) over an image's layers
   * (lowest first); made once per image.
   */
  imageBaseLayer(imageLayers: readonly string[]): Promise<string>;
  /** A directory for one image pull, under the layers directory so that a crash's leftovers are swept at the next start. */
  pullDir(): Promise<string>;
  /**
   * Takes the volume bound from host directory `source` away from every
   * sandbox mounting it, running or frozen (the volume is being deleted);
   * resolves with how many lost it. A sandbox still starting with it loses it
   * as soon as it has started.
   */
  detachVolume(source: string): Promise<number>;
  /** Deletes the writable layer of a stopped sandbox. */
  destroy(sandboxID: string): Promise<void>;
  /** Deletes an immutable layer no template uses any more. */
  deleteLayer(layerId: string): Promise<void>;
  /** One line saying what isolation every sandbox gets (the service prints it at start). */
  readonly isolation: string;
  /** The id of the built-in base layer (assembled read-only from the host). */
  readonly baseLayerId: string;
  /** The nftables table (family `inet`) this runtime owns; `close()` removes it. */
  readonly nftTable: string;
  /**
   * Most sandboxes running at once (API sandboxes, warm-pool members and
   * template builds together); `start()` refuses more with `rate_limited`.
   */
  readonly maxSandboxes: number;
  /** Memory limit of the cgroup every sandbox sits in (the host's memory minus its headroom), in bytes. */
  readonly sandboxesMemoryBytes: number;
  /**
   * Moves sandboxes to the background, or back: a sandbox in the background
   * gets the CPU only when no sandbox in the foreground wants it (its
   * cgroup's `cpu.idle`). It applies at once to running sandboxes and to
   * starts under way, and to a start that comes later under one of the ids;
   * ids are in the foreground until named here. Synchronous, a small write
   * per running sandbox. The warm pool keeps its members in the background
   * while a claimed sandbox's create and first command run.
   */
  setBackground(sandboxIDs: Iterable<string>, background: boolean): void;
  /** Stops every sandbox this runtime started. */
  close(): Promise<void>;
}
