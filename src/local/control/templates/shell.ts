/**
 * Shell snippets the build runs inside the build sandbox as root.
 *
 * @module
 */
import { shellWord } from "../../../wire/shell-word";

/** Creates `user` with a home directory unless it exists. */
export function ensureUserScript(user: string): string {
  return `id -u ${shellWord(user)} >/dev/null 2>&1 || useradd -m -s /bin/bash ${shellWord(user)}`;
}

/**
 * Creates `dir` (absolute, or relative to `base`) and prints its absolute path.
 * A directory this creates is given to `owner`, so the template's user can
 * write where it was told to work.
 */
export function workdirScript(dir: string, base: string | undefined, owner: string): string {
  return [
    "set -eu",
    `d=${shellWord(dir)}`,
    `base=${base ? shellWord(base) : `"$(getent passwd ${shellWord(owner)} | cut -d: -f6)"`}`,
    'case "$d" in /*) ;; *) d="${base%/}/$d" ;; esac',
    'd="$(realpath -m -- "$d")"',
    `if [ ! -e "$d" ]; then mkdir -p -- "$d"; chown ${shellWord(owner)}: "$d"; fi`,
    'printf "%s" "$d"',
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
    `base=${a.base ? shellWord(a.base) : `"$(getent passwd "$owner" | cut -d: -f6)"`}`,
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
