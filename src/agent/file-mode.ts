/**
 * Go's `FileMode.String()` for a Node `stat` mode, as envd puts it in
 * `EntryInfo.permissions` (`-rw-r--r--`, `drwxr-xr-x`, `Lrwxrwxrwx`).
 *
 * @module
 */
import * as fs from "node:fs";

const { S_IFMT, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFBLK, S_IFCHR, S_IFREG } = fs.constants;

/** Renders `mode` the way Go's `os.FileMode.String()` renders the equivalent Go mode. */
export function goFileModeString(mode: number): string {
  const type = mode & S_IFMT;
  // Go prints the set type/special bits in the order of "dalTLDpSugct?".
  let prefix = "";
  if (type === S_IFDIR) prefix += "d";
  if (type === S_IFLNK) prefix += "L";
  if (type === S_IFBLK || type === S_IFCHR) prefix += "D";
  if (type === S_IFIFO) prefix += "p";
  if (type === S_IFSOCK) prefix += "S";
  if (mode & 0o4000) prefix += "u";
  if (mode & 0o2000) prefix += "g";
  if (type === S_IFCHR) prefix += "c";
  if (mode & 0o1000) prefix += "t";
  if (
    type !== 0 &&
    ![S_IFDIR, S_IFLNK, S_IFBLK, S_IFCHR, S_IFIFO, S_IFSOCK, S_IFREG].includes(type)
  )
    prefix += "?";
  if (prefix === "") prefix = "-";
  const rwx = "rwxrwxrwx";
  let perms = "";
  for (let i = 0; i < 9; i++) perms += mode & (1 << (8 - i)) ? rwx[i] : "-";
  return prefix + perms;
}
