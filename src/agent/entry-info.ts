/**
 * Builds envd's `EntryInfo` from lstat (docs/envd.md#filesystem-behaviour).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import * as fs from "node:fs";
import * as path from "node:path";
import { EntryInfoSchema, FileType, type EntryInfo } from "../gen/envd/filesystem/filesystem_pb";
import { goFileModeString } from "./file-mode";
import { groupName, userName } from "./users";
import { readMetadata } from "./xattr";

function fileTypeOf(st: fs.Stats | fs.BigIntStats): FileType {
  if (st.isDirectory()) return FileType.DIRECTORY;
  if (st.isSymbolicLink()) return FileType.SYMLINK;
  return FileType.FILE;
}

/**
 * The entry of `absPath`, or undefined when it does not exist.
 *
 * @param displayPath the path reported in `path`. @default absPath
 * @param withMetadata read `user.e2b.*` attributes. @default true
 */
export async function entryInfo(
  absPath: string,
  displayPath: string = absPath,
  withMetadata = true,
): Promise<EntryInfo | undefined> {
  let st: fs.BigIntStats;
  try {
    st = await fs.promises.lstat(absPath, { bigint: true });
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  const entry = await fromStat(absPath, displayPath, st);
  if (withMetadata) entry.metadata = (await readMetadata([absPath]))[0] ?? {};
  return entry;
}

/** Builds the entry of `absPath` from an lstat result already at hand. */
export async function fromStat(
  absPath: string,
  displayPath: string,
  st: fs.BigIntStats,
): Promise<EntryInfo> {
  const mode = Number(st.mode);
  let type = fileTypeOf(st);
  let symlinkTarget: string | undefined;
  if (st.isSymbolicLink()) {
    // envd reports the target's type; a broken link has no type.
    try {
      symlinkTarget = await fs.promises.realpath(absPath);
      const target = await fs.promises.stat(absPath);
      type = target.isDirectory() ? FileType.DIRECTORY : FileType.FILE;
    } catch {
      symlinkTarget = absPath;
      type = FileType.UNSPECIFIED;
    }
  }
  const seconds = st.mtimeNs / 1_000_000_000n;
  const nanos = Number(st.mtimeNs % 1_000_000_000n);
  return create(EntryInfoSchema, {
    name: path.basename(displayPath),
    type,
    path: displayPath,
    size: st.size,
    mode: mode & 0o777,
    permissions: goFileModeString(mode),
    owner: userName(Number(st.uid)),
    group: groupName(Number(st.gid)),
    modifiedTime: { seconds, nanos },
    symlinkTarget,
  });
}

/** True for ENOENT/ENOTDIR, the errors that mean "not there". */
export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}
