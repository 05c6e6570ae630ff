/**
 * Friendly shapes of filesystem entries and events, mapped from the protobuf
 * messages (int64 sizes as numbers, timestamps as Dates, enums as words).
 *
 * @module
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  EventType,
  FileType,
  type EntryInfo as PbEntryInfo,
  type FilesystemEvent as PbFilesystemEvent,
} from "../../gen/envd/filesystem/filesystem_pb";

/** The kind of a filesystem entry. `unknown` is a broken symlink or an odd file. */
export type EntryType = "file" | "dir" | "symlink" | "unknown";

/** A file, directory or link inside the sandbox. */
export interface EntryInfo {
  /** The base name. */
  name: string;
  /** The kind; for a symlink envd reports the target's kind. */
  type: EntryType;
  /** The absolute path. */
  path: string;
  /** Size in bytes (of the link itself for a symlink). */
  size: number;
  /** Permission bits, e.g. 0o644 (no file-type bits). */
  mode: number;
  /** `ls -l` style permissions, e.g. `-rw-r--r--`. */
  permissions: string;
  /** Owner name (or numeric id when unknown). */
  owner: string;
  /** Group name (or numeric id when unknown). */
  group: string;
  /** Last modification time. */
  modifiedTime: Date | undefined;
  /** The fully resolved target when the entry is a symlink. */
  symlinkTarget: string | undefined;
  /** User metadata stored with the file (`X-Metadata-*` on upload). */
  metadata: Record<string, string>;
}

/** What happened to a watched entry. */
export type FilesystemEventType = "create" | "write" | "remove" | "rename" | "chmod" | "unknown";

/** One change seen by a directory watch. */
export interface FilesystemEvent {
  /** Path relative to the watched directory (may contain `/` when recursive). */
  name: string;
  /** What happened. */
  type: FilesystemEventType;
  /** The entry after the change, when `includeEntry` was asked and the server could stat it. */
  entry: EntryInfo | undefined;
}

const ENTRY_TYPES: Record<FileType, EntryType> = {
  [FileType.UNSPECIFIED]: "unknown",
  [FileType.FILE]: "file",
  [FileType.DIRECTORY]: "dir",
  [FileType.SYMLINK]: "symlink",
};

const EVENT_TYPES: Record<EventType, FilesystemEventType> = {
  [EventType.UNSPECIFIED]: "unknown",
  [EventType.CREATE]: "create",
  [EventType.WRITE]: "write",
  [EventType.REMOVE]: "remove",
  [EventType.RENAME]: "rename",
  [EventType.CHMOD]: "chmod",
};

/** Maps a protobuf `EntryInfo`. */
export function toEntryInfo(pb: PbEntryInfo): EntryInfo {
  return {
    name: pb.name,
    type: ENTRY_TYPES[pb.type] ?? "unknown",
    path: pb.path,
    // int64 on the wire; files beyond 2^53 bytes do not exist in practice.
    size: Number(pb.size),
    mode: pb.mode,
    permissions: pb.permissions,
    owner: pb.owner,
    group: pb.group,
    modifiedTime: pb.modifiedTime ? timestampDate(pb.modifiedTime) : undefined,
    symlinkTarget: pb.symlinkTarget,
    metadata: { ...pb.metadata },
  };
}

/** Maps a protobuf `FilesystemEvent`. */
export function toFilesystemEvent(pb: PbFilesystemEvent): FilesystemEvent {
  return {
    name: pb.name,
    type: EVENT_TYPES[pb.type] ?? "unknown",
    entry: pb.entry ? toEntryInfo(pb.entry) : undefined,
  };
}
