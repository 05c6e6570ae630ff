/**
 * The one way this project quotes a value for a POSIX shell: commands reach
 * sandboxes as `/bin/bash -l -c <string>` (docs/envd.md), and the service's
 * own build and disk scripts run through `sh -c` too.
 *
 * @module
 */

/**
 * Quotes `s` as one single-quoted shell word: inside single quotes nothing is
 * special, and a `'` is closed, escaped and reopened, so any string (spaces,
 * `$`, backquotes, newlines) reaches the program as exactly one argument.
 */
export function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
