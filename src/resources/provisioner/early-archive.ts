/**
 * A first upload's archive, started while the files are still being listed.
 * Listing 10,000 files took about 100 ms before the first byte was sent, with
 * the sandbox idle meanwhile (bench/provisioner.js, phases of the tree's
 * rows). Now, once the sandbox is open and {@link ARCHIVE_MIN_FILES} small
 * files are listed, `tar -x` starts in the sandbox and the archive is packed
 * from the files listed so far, then from each one as it is listed.
 *
 * Only when every spec has the same user and the same root (all
 * destinations absolute, or all relative to the home directory): then the
 * files the archive takes are exactly those the upload's plan would put in
 * its one archive (`upload-plan.ts`), and the listing's order is kept, duplicates
 * of a remote path settled before any file is handed on (`manifest.ts`).
 *
 * @module
 */
import type { SandboxClient } from "../../client/sandbox";
import {
  ARCHIVE_MAX_FILE_BYTES,
  ARCHIVE_MIN_FILES,
  isArchivable,
  streamOne,
  type ArchiveRoot,
} from "./archive";
import type { DeferredHashes } from "./deferred-hashes";
import type { ManifestEntry } from "./manifest-entry";
import type { FileSpec } from "./provisioner.args";

/** An archive under way: the entries it carries and the bytes it sent once it is done. */
export interface StartedArchive {
  /** Every entry the archive carries (complete once the listing ended). */
  readonly entries: ReadonlySet<ManifestEntry>;
  /** Settles once `tar` has extracted the archive: the bytes of its files. */
  readonly sent: Promise<number>;
}

/**
 * Entries handed from the listing to the packer as they come: each turn of
 * the packer takes all those listed since its last one.
 */
class EntryQueue implements AsyncIterable<readonly ManifestEntry[]> {
  private batch: ManifestEntry[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(entries: readonly ManifestEntry[]): void {
    this.batch.push(...entries);
    this.wake?.();
  }

  /** No more entries; with `failure`, the packer stops with it. */
  end(failure?: { error: unknown }): void {
    this.ended = true;
    this.failure = failure;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<readonly ManifestEntry[]> {
    for (;;) {
      // A failed listing stops the archive before anything else is packed.
      if (this.failure) throw this.failure.error;
      if (this.batch.length > 0) {
        const batch = this.batch;
        this.batch = [];
        yield batch;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/** The early archive of one run; see the module's comment. */
export class EarlyArchive {
  /** Small files listed before the archive started. */
  private readonly listed: ManifestEntry[] = [];
  /** Every file the archive takes. */
  private readonly taken = new Set<ManifestEntry>();
  private readonly queue = new EntryQueue();
  private sandbox: SandboxClient | undefined;
  private deferred: DeferredHashes | undefined;
  private started: StartedArchive | undefined;

  private constructor(
    private readonly user: string | undefined,
    private readonly root: ArchiveRoot,
    private readonly options: { log: (line: string) => void; signal?: AbortSignal | undefined },
  ) {}

  /** The early archive of a first upload of `specs`; undefined when they differ in user or root. */
  static of(
    specs: readonly FileSpec[],
    options: { log: (line: string) => void; signal?: AbortSignal | undefined },
  ): EarlyArchive | undefined {
    if (specs.length === 0) return undefined;
    const absolute = specs[0].destination.startsWith("/");
    const user = specs[0].user ?? "";
    for (const spec of specs) {
      if (spec.destination.startsWith("/") !== absolute || (spec.user ?? "") !== user)
        return undefined;
    }
    return new EarlyArchive(specs[0].user, absolute ? "/" : '"$HOME"', options);
  }

  /** Takes a listed file (the manifest's `onFile`): a small one goes into the archive. */
  add(entry: ManifestEntry, deferred: DeferredHashes | undefined): void {
    if (entry.size > ARCHIVE_MAX_FILE_BYTES || !isArchivable(entry.remotePath)) return;
    this.deferred = deferred;
    if (this.started) {
      this.taken.add(entry);
      this.queue.push([entry]);
      return;
    }
    this.listed.push(entry);
    this.startIfDue();
  }

  /** The run's sandbox is open: the archive may start. */
  attach(sandbox: SandboxClient): void {
    this.sandbox = sandbox;
    this.startIfDue();
  }

  /** The listing ended, with `failure` when it failed: the archive takes nothing more. */
  end(failure?: { error: unknown }): void {
    this.queue.end(failure);
  }

  /** The archive, when it started; undefined when the upload's plan is to send every file. */
  get archive(): StartedArchive | undefined {
    return this.started;
  }

  private startIfDue(): void {
    if (this.started || !this.sandbox || this.listed.length < ARCHIVE_MIN_FILES) return;
    const sandbox = this.sandbox;
    for (const entry of this.listed) this.taken.add(entry);
    this.options.log(
      `uploading ${this.listed.length}+ files in one archive while listing the rest`,
    );
    this.queue.push(this.listed.splice(0));
    const sent = (async () => {
      await streamOne(sandbox, this.user, this.queue, this.root, this.options.signal, (e, c) =>
        this.deferred?.fromContent(e, c),
      );
      let bytes = 0;
      for (const entry of this.taken) bytes += entry.size;
      return bytes;
    })();
    // Awaited by the sync; a run that fails before then must not leave it unhandled.
    sent.catch(() => undefined);
    this.started = { entries: this.taken, sent };
  }
}
