/**
 * The volumes of the local service: one directory per volume under
 * `<dataDir>/volumes/<volumeID>/`, holding `volume.json` (id, name, creation
 * time, size), `volume.img` (its ext4 file system, see image.ts) and `data/`
 * (where that is mounted: the content, bind-mounted into sandboxes).
 *
 * Crash safety: `data/` is made first and `volume.json` written atomically
 * last, so a `kill -9` during create leaves a directory without a record,
 * removed at the next start; delete renames the directory away before
 * removing it, so a half-deleted volume is never listed.
 *
 * @module
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { z } from "zod";
import {
  NAME_MAX_LENGTH as VOLUME_NAME_MAX,
  VOLUME_ID_PATTERN,
  VOLUME_NAME_PATTERN,
} from "../../../wire/ids";
import { serviceError } from "../http";
import { readJsonFile, syncDir, writeFileAtomic } from "../state-file";
import { safeEqual } from "../../../wire/safe-equal";
import { openHostDir } from "./confine";
import { removeContentOf, removeTreeAt } from "./remove";
import {
  makeVolumeImage,
  mountVolumeImage,
  shareVolumesDir,
  unmountVolume,
  volumeSizeOf,
} from "./image";

/** The file of a volume's ext4 image, beside its record. */
const IMAGE = "volume.img";

const recordSchema = z.object({
  volumeID: z.string().regex(VOLUME_ID_PATTERN),
  name: z.string().regex(VOLUME_NAME_PATTERN),
  createdAt: z.string(),
  /** The size limit in MiB; absent for volumes made before images (a plain directory, no limit). */
  sizeMB: z.number().int().optional(),
});

/** What is kept about one volume. */
export type VolumeRecord = z.infer<typeof recordSchema>;

/**
 * Takes the volume whose content is host directory `source` away from every
 * sandbox mounting it (the runtime's `detachVolume`).
 */
export type DetachVolume = (source: string) => Promise<unknown>;

/** The volumes of one data dir. */
export class VolumeStore {
  private readonly byId = new Map<string, VolumeRecord>();
  private readonly root: string;
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    dataDir: string,
    private readonly tokenSecret: string,
    private readonly log: (line: string) => void,
    private readonly detach: DetachVolume,
  ) {
    this.root = path.join(dataDir, "volumes");
  }

  /**
   * Loads the volumes of `dataDir`, removing what an interrupted create or
   * delete left. `detach` is called when a volume is deleted.
   */
  static async open(
    dataDir: string,
    tokenSecret: string,
    log: (line: string) => void,
    detach: DetachVolume = async () => undefined,
  ): Promise<VolumeStore> {
    const store = new VolumeStore(dataDir, tokenSecret, log, detach);
    await fs.mkdir(store.root, { recursive: true, mode: 0o711 });
    // Before any volume is mounted: their mounts must be children of the shared one.
    await shareVolumesDir(store.root);
    for (const entry of await fs.readdir(store.root)) {
      const dir = path.join(store.root, entry);
      const parsed = recordSchema.safeParse(await readJsonFile(path.join(dir, "volume.json")));
      if (parsed.success && parsed.data.volumeID === entry) {
        if (parsed.data.sizeMB !== undefined) {
          try {
            await mountVolumeImage(path.join(dir, IMAGE), path.join(dir, "data"));
          } catch (err) {
            // Served unmounted, its writes would land on the host's disk without a limit:
            // the volume is left out (and left in place) until its image is repaired.
            log(`volumes: volume ${entry} is left out: ${(err as Error).message}`);
            continue;
          }
        }
        store.byId.set(entry, parsed.data);
        continue;
      }
      log(`volumes: removing ${entry}, left by an interrupted create or delete`);
      await unmountVolume(path.join(dir, "data"));
      await store.removeEntry(entry);
    }
    return store;
  }

  /** Every volume, oldest first. */
  list(): VolumeRecord[] {
    return [...this.byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The volume with this id; 400 for an id that is not a UUID, 404 when there is none. */
  get(volumeID: string): VolumeRecord {
    assertVolumeID(volumeID);
    const v = this.byId.get(volumeID);
    if (!v) throw serviceError("not_found", `volume '${volumeID}' not found`);
    return v;
  }

  /** The volume named `name`, if any. */
  byName(name: string): VolumeRecord | undefined {
    return [...this.byId.values()].find((v) => v.name === name);
  }

  /** The host directory holding the volume's content. */
  dataPath(volumeID: string): string {
    return path.join(this.root, volumeID, "data");
  }

  /** The content API token of a volume: HMAC-SHA256 of its id under the service secret. */
  tokenOf(volumeID: string): string {
    return createHmac("sha256", this.tokenSecret).update(`volume:${volumeID}`).digest("hex");
  }

  /** Whether `token` is the content token of `volumeID` (constant time). */
  tokenMatches(volumeID: string, token: string): boolean {
    return safeEqual(token, this.tokenOf(volumeID));
  }

  /**
   * Creates a volume of `sizeMB` MiB (the default when absent); 400 for a bad
   * name or size, 409 when the name is taken.
   */
  create(name: unknown, sizeMB?: unknown): Promise<VolumeRecord> {
    return this.serial(async () => {
      assertVolumeName(name);
      const size = volumeSizeOf(sizeMB);
      if (this.byName(name))
        throw serviceError(
          "conflict",
          `a volume named '${name}' already exists: pick another name, or use the existing volume`,
        );
      const record: VolumeRecord = {
        volumeID: randomUUID(),
        name,
        createdAt: new Date().toISOString(),
        sizeMB: size,
      };
      const dir = path.join(this.root, record.volumeID);
      const data = path.join(dir, "data");
      await fs.mkdir(dir, { mode: 0o711 });
      try {
        await fs.mkdir(data, { mode: 0o755 });
        await makeVolumeImage(path.join(dir, IMAGE), size);
        await mountVolumeImage(path.join(dir, IMAGE), data);
        // mkfs's lost+found would show in every listing of the volume.
        await fs.rmdir(path.join(data, "lost+found"));
        await writeFileAtomic(path.join(dir, "volume.json"), JSON.stringify(record));
      } catch (err) {
        await unmountVolume(data).catch(() => undefined);
        await this.removeEntry(record.volumeID).catch(() => undefined);
        throw err;
      }
      this.byId.set(record.volumeID, record);
      return record;
    });
  }

  /**
   * Deletes a volume and its content. It is first taken away from every
   * sandbox mounting it (running or paused): they see the directory under
   * their mount path again, and nothing they write reaches the volume. Its
   * content is then removed (as E2B deletes a mounted volume's data too; a
   * process still holding a descriptor into it finds it empty) and its file
   * system unmounted.
   */
  delete(volumeID: string): Promise<void> {
    return this.serial(async () => {
      const record = this.get(volumeID);
      const dir = path.join(this.root, volumeID);
      const doomed = path.join(this.root, `.deleted-${randomBytes(6).toString("hex")}`);
      // The rename is the commit point; the volume is gone even if the removal is cut short.
      await fs.rename(dir, doomed);
      await syncDir(this.root);
      this.byId.delete(volumeID);
      // By the path sandboxes were given (now renamed away, so no sandbox can start with it).
      await this.detach(this.dataPath(volumeID)).catch((err: Error) => {
        this.log(`volumes: detaching ${volumeID} from sandboxes failed: ${err.message}`);
      });
      if (record.sizeMB !== undefined) {
        const data = path.join(doomed, "data");
        await this.emptyMounted(data).catch((err: Error) => {
          this.log(`volumes: emptying ${volumeID} failed: ${err.message}`);
        });
        await unmountVolume(data).catch((err: Error) => {
          this.log(`volumes: unmounting ${volumeID} failed: ${err.message}`);
        });
      }
      // Whatever is left (a sandbox writing into the tree forever) is removed at the next start.
      await this.removeEntry(path.basename(doomed)).catch((err: Error) => {
        this.log(`volumes: removing the content of ${volumeID} failed: ${err.message}`);
      });
    });
  }

  /** Unmounts every volume (the service is stopping); the next start mounts them again. */
  async close(): Promise<void> {
    await this.serial(async () => {
      for (const v of this.byId.values())
        if (v.sizeMB !== undefined) await unmountVolume(this.dataPath(v.volumeID));
      await unmountVolume(this.root);
    });
  }

  /** Removes the content of the mounted volume at `data` (see removeEntry). */
  private async emptyMounted(data: string): Promise<void> {
    const dir = await openHostDir(data);
    try {
      await removeContentOf(dir);
    } finally {
      await dir.close();
    }
  }

  /**
   * Removes `<root>/<name>` with everything below it, through directory
   * descriptors only (remove.ts): sandboxes may still be swapping its
   * directories for symlinks to the host.
   */
  private async removeEntry(name: string): Promise<void> {
    const dir = await openHostDir(this.root);
    try {
      await removeTreeAt(dir, name);
    } finally {
      await dir.close();
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/** Throws a 400 unless `id` is a volume id (a UUID). */
function assertVolumeID(id: string): void {
  if (!VOLUME_ID_PATTERN.test(id))
    throw serviceError(
      "invalid_argument",
      `invalid volume ID ${JSON.stringify(id.slice(0, 80))}: use the volumeID returned by create (a UUID)`,
    );
}

/** Throws a 400 unless `name` is a valid volume name. */
function assertVolumeName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !VOLUME_NAME_PATTERN.test(name) || name.length > VOLUME_NAME_MAX)
    throw serviceError(
      "invalid_argument",
      `body.name: a volume name is 1 to ${VOLUME_NAME_MAX} characters of letters, digits, '_' and '-', got ${JSON.stringify(name)?.slice(0, 80) ?? "nothing"}`,
    );
}
