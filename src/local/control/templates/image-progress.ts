/**
 * Pull progress for the build log: which layers are downloaded or skipped,
 * and bytes as they arrive. skopeo prints no machine-readable progress (its
 * progress bars need a terminal), so this follows its "Copying blob" lines
 * and polls the OCI layout it writes: a blob being downloaded is an
 * `oci-put-blob*` file in the layout directory, renamed to
 * `blobs/sha256/<hex>` when complete. Byte lines come at most once per
 * interval; while several layers download at once, their bytes are reported
 * together (the temporary files do not say which layer they hold).
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";

/** The prefix of skopeo's temporary blob files in an OCI layout. */
const TEMP_BLOB_PREFIX = "oci-put-blob";

/** `1234567` → `1.2 MB`. */
export function formatMb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** A layer the pull is expected to copy. */
interface ProgressLayer {
  digest: string;
  size: number;
  /** Already unpacked: skopeo finds a stand-in blob and downloads nothing. */
  skipped: boolean;
}

/** Options of {@link followPull}. */
export interface FollowOptions {
  /** The OCI layout skopeo writes. */
  layout: string;
  /** The layers from the registry's manifest, when it could be read. */
  layers: readonly ProgressLayer[] | undefined;
  log: (line: string) => void;
  /** Least time between two byte lines. */
  intervalMs?: number | undefined;
}

/** Following one pull: feed it skopeo's stdout lines, then stop it. */
export interface PullFollower {
  onLine(line: string): void;
  /** Stops polling and logs the layers finished since the last poll; returns the bytes downloaded. */
  stop(): Promise<number>;
}

interface Tracked {
  index: number;
  digest: string;
  size: number | undefined;
  skipped: boolean;
  done: boolean;
}

/** Starts following a pull into `opts.layout`. */
export function followPull(opts: FollowOptions): PullFollower {
  const known = opts.layers ?? [];
  const total = opts.layers ? `/${opts.layers.length}` : "";
  const started: Tracked[] = [];
  let lastBytes = 0;
  let downloaded = 0;
  const name = (t: Tracked) => `layer ${t.index}${total} ${t.digest.slice(0, 19)}`;

  const scan = async (report: boolean) => {
    const active = started.filter((t) => !t.skipped && !t.done);
    for (const t of active) {
      const blob = path.join(opts.layout, "blobs", "sha256", t.digest.slice("sha256:".length));
      const st = await fs.stat(blob).catch(() => undefined);
      if (!st) continue;
      t.done = true;
      downloaded += st.size;
      opts.log(`Downloaded ${name(t)} (${formatMb(st.size)})`);
    }
    const still = active.filter((t) => !t.done);
    if (!report || still.length === 0) return;
    let bytes = 0;
    for (const n of await fs.readdir(opts.layout).catch(() => [] as string[])) {
      if (!n.startsWith(TEMP_BLOB_PREFIX)) continue;
      bytes += (await fs.stat(path.join(opts.layout, n)).catch(() => undefined))?.size ?? 0;
    }
    if (bytes === 0 || bytes === lastBytes) return;
    lastBytes = bytes;
    const of = still.every((t) => t.size !== undefined)
      ? ` of ${formatMb(still.reduce((n, t) => n + t.size!, 0))}`
      : "";
    const which =
      still.length === 1
        ? name(still[0])
        : `layers ${still.map((t) => `${t.index}${total}`).join(", ")}`;
    opts.log(`Downloading ${which}: ${formatMb(bytes)}${of}`);
  };

  // One scan at a time: a slow disk must not pile them up.
  let scanning: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    scanning = scanning.then(() => scan(true)).catch(() => {});
  }, opts.intervalMs ?? 1000);

  return {
    onLine(line) {
      const m = /^Copying blob (sha256:[0-9a-f]{64})/.exec(line);
      if (!m) return;
      const i = known.findIndex((l) => l.digest === m[1]);
      const t: Tracked = {
        index: i >= 0 ? i + 1 : started.length + 1,
        digest: m[1],
        size: i >= 0 ? known[i].size : undefined,
        skipped: i >= 0 && known[i].skipped,
        done: false,
      };
      started.push(t);
      const size = t.size === undefined ? "" : ` (${formatMb(t.size)})`;
      const upper = name(t).replace(/^l/, "L");
      opts.log(
        t.skipped
          ? `${upper}${size}: already unpacked, not downloaded`
          : `Downloading ${name(t)}${size}`,
      );
    },
    async stop() {
      clearInterval(timer);
      await scanning;
      await scan(false).catch(() => {});
      return downloaded;
    },
  };
}
