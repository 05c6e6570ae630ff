/**
 * Hashes a first upload computes from the bytes it sends. With no live state
 * to compare against (a create, or an update into a fresh sandbox), nothing
 * needs a file's hash before the file is sent: the manifest lists the small
 * files the hash cache does not vouch for with their stat only, the archive
 * packer hashes each one from the very bytes it reads into the archive, and
 * whatever did not travel in an archive is hashed before it is sent another
 * way. Each such file is then read once instead of twice, and the upload
 * starts right after the listing instead of after the hashing
 * (bench/provisioner.js, phases of the tree's rows).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { SandboxIacError } from "../../errors";
import { hashSmallFileSync, unreadableFile, type FileHash } from "./file-hash";
import type { HashCache } from "./hash-cache";
import type { ManifestEntry } from "./manifest-entry";

/** The files of a manifest whose hashes are still to come, and the cache they go to. */
export class DeferredHashes {
  /** Each pending entry with the stat its size and mode came from. */
  private readonly pending = new Map<ManifestEntry, BigIntStats>();
  private finishing: Promise<void> | undefined;
  /** Resolves {@link complete}'s promise, once asked for and while hashes are pending. */
  private emptied: (() => void) | undefined;

  constructor(private readonly cache: HashCache) {}

  /** Leaves `entry`'s hash (empty until then) to be computed later; `stat` was taken when it was listed. */
  defer(entry: ManifestEntry, stat: BigIntStats): void {
    this.pending.set(entry, stat);
  }

  /** Files still without a hash. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Settles once no hash is pending (at once when none is). With the
   * manifest complete, a first upload's hashes are all known once its
   * archive packed its last file, while `tar` in the sandbox still extracts
   * the rest: the run stores the cache and makes its digest meanwhile.
   */
  complete(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const before = this.emptied;
      this.emptied = () => {
        before?.();
        resolve();
      };
    });
  }

  /** `entry` has its hash. */
  private hashed(entry: ManifestEntry): void {
    this.pending.delete(entry);
    if (this.pending.size > 0) return;
    const emptied = this.emptied;
    this.emptied = undefined;
    emptied?.();
  }

  /**
   * Takes `entry`'s hash from `content`, the bytes just read for sending
   * (exactly its listed size). The cache records it under the listing's
   * stat: a file changed since then has another stat, so its next run
   * hashes it again rather than trusting this one.
   */
  fromContent(entry: ManifestEntry, content: Uint8Array): void {
    const stat = this.pending.get(entry);
    if (stat === undefined) return;
    entry.sha256 = createHash("sha256").update(content).digest("hex");
    this.cache.record(entry.localPath, stat, entry.sha256);
    this.hashed(entry);
  }

  /** Hashes those of `entries` still pending, before they are sent by a path that does not hash. */
  settle(entries: Iterable<ManifestEntry>): void {
    for (const entry of entries) {
      if (!this.pending.has(entry)) continue;
      let h: FileHash;
      try {
        h = hashSmallFileSync(entry.localPath);
      } catch (cause) {
        throw unreadableFile(entry, cause);
      }
      if (!h.isFile) {
        throw new SandboxIacError(
          "conflict",
          `${JSON.stringify(entry.localPath)} (for ${entry.remotePath}) stopped being a regular file while it was being uploaded: run again once it is in place`,
          { operation: "provisioner.files", resourceId: entry.localPath },
        );
      }
      entry.sha256 = h.sha256;
      entry.size = h.size;
      entry.mode = h.mode;
      this.cache.record(entry.localPath, h.stat, h.sha256);
      this.hashed(entry);
    }
  }

  /**
   * Hashes every file still pending and stores the cache: the manifest is
   * then complete. Called again, it answers the first call's promise.
   */
  finish(): Promise<void> {
    return (this.finishing ??= (async () => {
      this.settle([...this.pending.keys()]);
      await this.cache.save();
    })());
  }
}
