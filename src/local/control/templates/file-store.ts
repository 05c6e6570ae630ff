/**
 * Uploaded COPY archives, stored by content hash as `<hash>.tar` or
 * `<hash>.tar.gz`, and the single-use tokens that scope the unauthenticated
 * upload URLs the SDK PUTs to.
 *
 * @module
 */
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { serviceError } from "../http";
import { syncDir } from "../state-file";
import { safeEqual } from "../../../wire/safe-equal";
import { UPLOAD_TOKEN_TTL_MS } from "./constants";
import { SandboxIacError } from "../../../errors";

/** `^[0-9a-f]{64}$`: a sha256 in hex, the SDK's files hash. */
export const FILES_HASH_RE = /^[0-9a-f]{64}$/;

const GZIP_MAGIC = [0x1f, 0x8b];

interface UploadGrant {
  templateID: string;
  hash: string;
  expiresAt: number;
}

/** The stored archives and the upload grants. */
export class TemplateFileStore {
  private readonly grants = new Map<string, UploadGrant>();

  private constructor(private readonly dir: string) {}

  /** Opens (creating) the store in `dir` and removes uploads a crash left half written. */
  static async open(dir: string): Promise<TemplateFileStore> {
    await fsp.mkdir(dir, { recursive: true });
    for (const name of await fsp.readdir(dir)) {
      if (name.includes(".partial-")) await fsp.rm(path.join(dir, name), { force: true });
    }
    return new TemplateFileStore(dir);
  }

  /** The stored archive of `hash`, when present. */
  find(hash: string): string | undefined {
    for (const name of [`${hash}.tar.gz`, `${hash}.tar`]) {
      const p = path.join(this.dir, name);
      if (fs.existsSync(p)) return p;
    }
    return undefined;
  }

  /** Issues a random token allowing one upload of `hash` for `templateID`. */
  grant(templateID: string, hash: string): string {
    const now = Date.now();
    for (const [token, g] of this.grants) if (g.expiresAt < now) this.grants.delete(token);
    const token = randomBytes(24).toString("hex");
    this.grants.set(token, { templateID, hash, expiresAt: now + UPLOAD_TOKEN_TTL_MS });
    return token;
  }

  /** Consumes a grant; throws `permission_denied` when it is unknown, expired or for other files. */
  private redeem(templateID: string, hash: string, token: string): void {
    const g = this.grants.get(token);
    const ok =
      g !== undefined &&
      g.expiresAt >= Date.now() &&
      safeEqual(g.templateID, templateID) &&
      safeEqual(g.hash, hash);
    if (!ok) {
      throw serviceError(
        "permission_denied",
        "the upload link is unknown, expired or for other files: ask for a new one with GET /templates/{templateID}/files/{hash}",
      );
    }
    this.grants.delete(token);
  }

  /**
   * Streams an upload to disk (temp file, fsync, rename). The archive may be
   * gzipped or not; the magic bytes decide the file name. When the request
   * declared a `Content-Length`, exactly that many bytes must arrive.
   */
  async receive(
    templateID: string,
    hash: string,
    token: string,
    body: Readable,
    contentLength: number | undefined,
  ): Promise<void> {
    this.redeem(templateID, hash, token);
    const partial = path.join(this.dir, `${hash}.partial-${randomBytes(6).toString("hex")}`);
    const out = await fsp.open(partial, "w", 0o600);
    let size = 0;
    let head: Buffer = Buffer.alloc(0);
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (head.length < 2) head = Buffer.concat([head, chunk]).subarray(0, 2);
        size += chunk.length;
        await out.write(chunk);
      }
      await out.sync();
    } catch (err) {
      await out.close();
      await fsp.rm(partial, { force: true });
      throw serviceError(
        "invalid_argument",
        `the upload of ${hash} was interrupted after ${size} bytes: ${SandboxIacError.from(err, { operation: "templates.upload" }).reason}`,
      );
    }
    await out.close();
    if (contentLength !== undefined && size !== contentLength) {
      await fsp.rm(partial, { force: true });
      throw serviceError(
        "invalid_argument",
        `the upload of ${hash} has ${size} bytes but Content-Length said ${contentLength}`,
      );
    }
    if (size === 0) {
      await fsp.rm(partial, { force: true });
      throw serviceError(
        "invalid_argument",
        `the upload of ${hash} is empty: send the tar archive of the COPY sources`,
      );
    }
    const gz = head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
    await fsp.rename(partial, path.join(this.dir, `${hash}.tar${gz ? ".gz" : ""}`));
    // a re-upload in the other format must not leave a stale twin that find() prefers
    await fsp.rm(path.join(this.dir, `${hash}.tar${gz ? "" : ".gz"}`), { force: true });
    await syncDir(this.dir);
  }
}
