/**
 * Shell snippets the build runs inside the build sandbox as root.
 *
 * @module
 */
import * as path from "node:path";
import { shellWord } from "../../../wire/shell-word";

/**
 * Creates `user` with a home directory unless it exists: with shadow's
 * `useradd` (Debian, Fedora…), else busybox's `adduser` (Alpine), else (an
 * image with neither, such as a bare busybox one) by appending to the account
 * files, with the next free id from 1000 as uid and gid.
 */
export function ensureUserScript(user: string): string {
  const u = shellWord(user);
  const home = shellWord(`/home/${user}`);
  return [
    `id -u ${u} >/dev/null 2>&1 && exit 0`,
    `if command -v useradd >/dev/null 2>&1; then exec useradd -m -s /bin/bash ${u}; fi`,
    `if command -v adduser >/dev/null 2>&1; then exec adduser -D -s /bin/bash ${u}; fi`,
    "set -eu",
    "id=$(awk -F: 'BEGIN { m = 999 } $3 > m && $3 < 60000 { m = $3 } END { print m + 1 }' /etc/passwd /etc/group)",
    `echo ${u}":x:$id:" >> /etc/group`,
    `echo ${u}":x:$id:$id::"${home}":/bin/bash" >> /etc/passwd`,
    `if [ -f /etc/shadow ]; then echo ${u}":!::0:99999:7:::" >> /etc/shadow; fi`,
    `mkdir -p ${home}`,
    `chown "$id:$id" ${home}`,
  ].join("\n");
}

/**
 * A shell expression for the home directory of `owner`, read from
 * `/etc/passwd` with awk (images without glibc, such as Alpine or busybox
 * ones, have no `getent`).
 */
function homeOf(owner: string): string {
  return `"$(awk -F: -v u=${shellWord(owner)} '$1 == u { print $6; exit }' /etc/passwd)"`;
}

/**
 * Creates `dir` (absolute, or relative to `base`) and prints its absolute,
 * symlink-free path. A directory this creates is given to `owner`, so the
 * template's user can write where it was told to work. POSIX sh and busybox
 * tools only (no `realpath -m`), as every image has them.
 */
export function workdirScript(dir: string, base: string | undefined, owner: string): string {
  // `..` is resolved on the path as written, as Docker's WORKDIR does, before anything is made.
  const clean = path.posix.normalize(
    base && !dir.startsWith("/") ? path.posix.join(base, dir) : dir,
  );
  return [
    "set -eu",
    `d=${shellWord(clean)}`,
    `base=${base ? shellWord(base) : homeOf(owner)}`,
    'case "$d" in /*) ;; *) d="${base%/}/$d" ;; esac',
    `if [ ! -e "$d" ]; then mkdir -p -- "$d"; chown ${shellWord(owner)}: "$d"; fi`,
    'cd -P -- "$d"',
    'printf "%s" "$(pwd -P)"',
  ].join("\n");
}

/** Arguments of {@link copyScript}. */
export interface CopyScriptArgs {
  /** Where the archive was extracted. */
  stage: string;
  /** The COPY source as the SDK wrote it: a path or glob relative to the archive root. */
  src: string;
  /** The destination, absolute or relative to `base`. */
  dest: string;
  /** The current working directory of the build, if set (else the owner's home). */
  base: string | undefined;
  /** Who owns the copied files. */
  owner: string;
  /** Octal mode for copied files, e.g. `0755`; empty keeps the archive's modes. */
  mode: string;
}

/**
 * Copies from the extracted archive to the destination with Docker's COPY
 * rules: a directory's contents go into `dest`; a file goes to `dest`, or
 * into it when `dest` ends with `/`, already is a directory, or several
 * sources matched. Copied entries get `owner` and, for files, `mode`.
 * The staging folder is removed so it never reaches the captured layer.
 */
export function copyScript(a: CopyScriptArgs): string {
  return [
    "set -eu",
    "shopt -s nullglob dotglob",
    `stage=${shellWord(a.stage)}`,
    `dest=${shellWord(a.dest)}`,
    `owner=${shellWord(a.owner)}`,
    `mode=${shellWord(a.mode)}`,
    `base=${a.base ? shellWord(a.base) : homeOf(a.owner)}`,
    "trap 'rm -rf -- \"$stage\"' EXIT",
    'case "$dest" in /*) ;; *) dest="${base%/}/$dest" ;; esac',
    'cd -- "$stage"',
    // word splitting only on newlines, so the unquoted expansion globs without splitting on spaces
    "IFS=$'\\n'",
    `matches=( ${globWord(a.src)} )`,
    "unset IFS",
    'if [ ${#matches[@]} -eq 0 ]; then echo "COPY: no files match $(printf %q ' +
      shellWord(a.src) +
      ') in the uploaded archive" >&2; exit 1; fi',
    "into=0",
    'case "$dest" in */) into=1 ;; esac',
    '[ -d "$dest" ] && into=1',
    "[ ${#matches[@]} -gt 1 ] && into=1",
    'dest="${dest%/}"; [ -n "$dest" ] || dest=/',
    'fix() { chown -R "$owner": -- "$1"; if [ -n "$mode" ]; then find "$1" -type f -exec chmod "$mode" {} +; fi; }',
    'for m in "${matches[@]}"; do',
    '  if [ -d "$m" ] && [ ! -L "$m" ]; then',
    '    if [ ! -e "$dest" ]; then mkdir -p -- "$dest"; chown "$owner": -- "$dest"; fi',
    '    for e in "$m"/*; do cp -a -- "$e" "$dest/"; fix "$dest/$(basename -- "$e")"; done',
    "  elif [ $into -eq 1 ]; then",
    '    if [ ! -e "$dest" ]; then mkdir -p -- "$dest"; chown "$owner": -- "$dest"; fi',
    '    cp -a -- "$m" "$dest/"; fix "$dest/$(basename -- "$m")"',
    "  else",
    '    mkdir -p -- "$(dirname -- "$dest")"',
    '    cp -a -- "$m" "$dest"; fix "$dest"',
    "  fi",
    "done",
  ].join("\n");
}

/**
 * Renders a relative path or glob as a shell word that still globs: glob
 * characters stay bare, everything else is quoted. A leading `./` is dropped,
 * as the SDK's tar stores paths relative to the context without it.
 */
function globWord(src: string): string {
  const clean = src.replace(/^(\.\/)+/, "").replace(/\/+$/, "") || ".";
  return clean
    .split(/([*?[\]])/)
    .map((part) => (/^[*?[\]]$/.test(part) ? part : part ? shellWord(part) : ""))
    .join("");
}
