/**
 * The local side of a COPY step: which files it takes, their hash (computed
 * exactly as the official SDK's `calculateFilesHash` does, so the service's
 * file cache is shared with SDK builds), and the archive that is uploaded.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  readlinkSync,
  statSync,
} from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { globSync, type Path } from "glob";
import { SandboxIacError } from "../../errors";

/** Where a COPY source is read from: the archive root, the source inside it, what it ignores. */
export interface CopySource {
  /** The directory the archive's paths are relative to. */
  contextDir: string;
  /** The source as a POSIX path or glob relative to `contextDir` (what the COPY step names). */
  src: string;
  /** Patterns left out of the hash and the archive: the context's `.dockerignore`. */
  ignore: string[];
}

/**
 * The patterns of `contextDir/.dockerignore`, read as the SDK's
 * `readDockerignore` does (trimmed lines, no blanks, no `#` comments).
 */
function readDockerignore(contextDir: string): string[] {
  const file = path.join(contextDir, ".dockerignore");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf-8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
}

/**
 * Places a COPY `src` (a path or glob relative to `contextDir`, or absolute) in
 * an archive root. A source inside `contextDir` keeps its relative path, as
 * with the SDK, and the context's `.dockerignore` applies; one outside
 * (absolute, or with `..`) is archived from its own parent directory.
 */
export function resolveCopySource(src: string, contextDir: string): CopySource {
  const absolute = path.resolve(contextDir, src);
  const relative = path.relative(contextDir, absolute);
  if (relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)) {
    return {
      contextDir,
      src: relative.split(path.sep).join("/"),
      ignore: readDockerignore(contextDir),
    };
  }
  return { contextDir: path.dirname(absolute), src: path.basename(absolute), ignore: [] };
}

interface ListedFile {
  fullpath: string;
  relativePosix: string;
  isSymbolicLink: boolean;
}

/**
 * The files a COPY of `src` takes, sorted by full path, as the SDK's
 * `getAllFilesInPath` lists them: every match of the glob (dot files
 * included, ignored patterns left out) and, for a matched directory,
 * everything below it. Symbolic links are listed, never followed (the SDK's
 * default, `resolveSymlinks: false`).
 */
function listCopyFiles(source: CopySource): ListedFile[] {
  const options = {
    ignore: source.ignore,
    withFileTypes: true,
    dot: true,
    cwd: source.contextDir,
  } as const;
  const files = new Map<string, Path>();
  for (const match of globSync(source.src, options)) {
    files.set(match.fullpath(), match);
    if (!match.isDirectory()) continue;
    const below = path
      .join(match.relative() || ".", "**/*")
      .split(path.sep)
      .join("/");
    for (const f of globSync(below, options)) files.set(f.fullpath(), f);
  }
  if (files.size === 0) {
    throw new SandboxIacError(
      "invalid_argument",
      `COPY source ${JSON.stringify(source.src)} matches no file in ${source.contextDir}` +
        (source.ignore.length > 0 ? " (after its .dockerignore)" : "") +
        ": create it or fix build.steps[].copy.src",
      {
        operation: "templates.copy",
        resourceId: path.join(source.contextDir, source.src),
        field: "copy.src",
      },
    );
  }
  return [...files.values()]
    .sort((a, b) => (a.fullpath() < b.fullpath() ? -1 : a.fullpath() > b.fullpath() ? 1 : 0))
    .map((f) => ({
      fullpath: f.fullpath(),
      relativePosix: f.relativePosix(),
      isSymbolicLink: f.isSymbolicLink(),
    }));
}

const CHUNK_BYTES = 1024 * 1024;

/** Feeds a file to `hash` in chunks, so big sources never sit whole in memory. */
function hashFileContent(hash: ReturnType<typeof createHash>, file: string): void {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The files hash of a COPY step, as the SDK's `calculateFilesHash`: sha256 over
 * `"COPY <src> <dest>"`, then for each file its relative path, mode, size and
 * content (a link's target for symbolic links). uid, gid and mtime are left out
 * so the hash is stable across machines.
 * Synchronous on purpose: `diff` is synchronous and needs it to see changed files.
 */
export function calculateFilesHash(source: CopySource, dest: string): string {
  const hash = createHash("sha256");
  hash.update(`COPY ${source.src} ${dest}`);
  for (const file of listCopyFiles(source)) {
    hash.update(file.relativePosix);
    if (file.isSymbolicLink) {
      const linkStat = lstatSync(file.fullpath);
      hash.update(linkStat.mode.toString());
      hash.update(linkStat.size.toString());
      hash.update(readlinkSync(file.fullpath));
      continue;
    }
    const fileStat = statSync(file.fullpath);
    hash.update(fileStat.mode.toString());
    hash.update(fileStat.size.toString());
    if (fileStat.isFile()) hashFileContent(hash, file.fullpath);
  }
  return hash.digest("hex");
}

/** A gzipped tar spooled to disk, with its exact size. */
export interface SpooledArchive {
  /** Path of the archive. */
  path: string;
  /** Size in bytes, for the upload's `Content-Length`. */
  size: number;
  /** Removes the archive; never throws. */
  cleanup(): Promise<void>;
}

/**
 * Writes the COPY's files as a gzipped tar to a temporary file, with the layout
 * of the SDK's archive: paths relative to the context directory, one entry per
 * listed file (no directory recursion), links kept as links.
 */
export async function spoolCopyArchive(source: CopySource): Promise<SpooledArchive> {
  const { create } = await import("tar");
  const files = listCopyFiles(source).map((f) => f.relativePosix);
  const dir = await mkdtemp(path.join(tmpdir(), "sandbox-iac-copy-"));
  const cleanup = () => rm(dir, { recursive: true, force: true }).catch(() => undefined);
  const archive = path.join(dir, "context.tar.gz");
  try {
    await create(
      { gzip: true, cwd: source.contextDir, follow: false, noDirRecurse: true, file: archive },
      files,
    );
    const { size } = await stat(archive);
    return { path: archive, size, cleanup };
  } catch (err) {
    await cleanup();
    throw new SandboxIacError(
      "internal",
      `could not archive COPY source ${JSON.stringify(source.src)}: ${String(err)}`,
      {
        operation: "templates.copy",
        resourceId: source.contextDir,
        cause: err,
      },
    );
  }
}
