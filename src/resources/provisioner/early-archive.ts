/**
 * A first upload's archive, started while the files are still being listed.
 * Listing 10,000 files took about 100 ms before the first byte was sent, with
 * the sandbox idle meanwhile (bench/provisioner.js, phases of the tree's
 * rows). Now, once the sandbox is open and {@link ARCHIVE_MIN_FILES} small
 * files are listed, the archive is packed from the files listed so far, then
 * from each one as it is listed.
 *
 * Its `tar -x` starts in the sandbox earlier still, as soon as the sandbox
 * is open and the walk found that many files (before any is looked at):
 * starting it took 11-17 ms, which the archive's first bytes waited for
 * after the listing's first files. When fewer small files than that turn
 * up, the `tar` already running takes those there are (or an empty
 * archive), rather than multipart batches.
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
  startExtraction,
  streamInto,
  type ArchiveRoot,
  type Extraction,
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
  /** Files the walk found; 0 until it ended. */
  private walkedFiles = 0;
  private ended = false;
  /** The `tar` started ahead of the archive, once the walk found enough files. */
  private extraction: Promise<Extraction> | undefined;

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

  /** The walk found `files` files (the manifest's `onWalked`): `tar` may start. */
  walked(files: number): void {
    this.walkedFiles = files;
    this.startTarIfDue();
  }

  /** The run's sandbox is open: `tar` and the archive may start. */
  attach(sandbox: SandboxClient): void {
    this.sandbox = sandbox;
    this.startTarIfDue();
    this.startIfDue();
  }

  /**
   * The listing ended, with `failure` when it failed: the archive takes
   * nothing more. A `tar` started ahead of an archive that did not start
   * takes the small files listed (none: an empty archive); a failed listing
   * fails its input, which kills it.
   */
  end(failure?: { error: unknown }): void {
    this.ended = true;
    if (this.extraction && !this.started) {
      const count = this.listed.length;
      this.start(count > 0 ? `uploading ${count} files in one archive` : undefined);
    }
    this.queue.end(failure);
  }

  /** The archive, when it started; undefined when the upload's plan is to send every file. */
  get archive(): StartedArchive | undefined {
    return this.started;
  }

  private startTarIfDue(): void {
    if (this.extraction || this.started || this.ended) return;
    if (!this.sandbox || this.walkedFiles < ARCHIVE_MIN_FILES) return;
    this.extraction = startExtraction(this.sandbox, this.user, this.root);
    // Awaited by the archive, which always starts once it is there (`end`).
    this.extraction.catch(() => undefined);
  }

  private startIfDue(): void {
    if (this.started || this.listed.length < ARCHIVE_MIN_FILES) return;
    this.start(`uploading ${this.listed.length}+ files in one archive while listing the rest`);
  }

  /** Starts the archive with the files listed so far (logging `line`), in the `tar` started ahead if any. */
  private start(line: string | undefined): void {
    const sandbox = this.sandbox;
    if (!sandbox) return;
    for (const entry of this.listed) this.taken.add(entry);
    if (line !== undefined) this.options.log(line);
    this.queue.push(this.listed.splice(0));
    const extraction = this.extraction ?? startExtraction(sandbox, this.user, this.root);
    const sent = (async () => {
      await streamInto(sandbox, await extraction, this.queue, this.options.signal, (e, c) =>
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
