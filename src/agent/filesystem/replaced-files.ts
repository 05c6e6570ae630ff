/**
 * What watchers need to report an atomic replace as the write it is. Uploads
 * and compose write a temporary file and rename it into place; inotify then
 * shows a rename, while a user (and envd, which writes in place) expects
 * CREATE/WRITE on the file's own name. The writer notes each replace here;
 * watchers in the same agent hide the temporary names and translate.
 *
 * @module
 */

/** Prefix of every temporary file the agent creates next to a user's file. */
export const AGENT_TEMP_PREFIX = ".sandbox-iac-";

/** How long a replace stays recognisable: far longer than inotify's delivery delay. */
const REMEMBER_MS = 5_000;

const replaced = new Map<string, { created: boolean; at: number }>();

/** True for the name of one of the agent's temporary files. */
export function isAgentTempName(name: string): boolean {
  const slash = name.lastIndexOf("/");
  return name.slice(slash + 1).startsWith(AGENT_TEMP_PREFIX);
}

/** Records that `abs` is about to be replaced by a rename; `created` when it did not exist. */
export function noteReplace(abs: string, created: boolean): void {
  const now = Date.now();
  for (const [p, r] of replaced) if (now - r.at > REMEMBER_MS) replaced.delete(p);
  replaced.set(abs, { created, at: now });
}

/** The recent replace of `abs`, if any. */
export function recentReplace(abs: string): { created: boolean } | undefined {
  const r = replaced.get(abs);
  return r && Date.now() - r.at <= REMEMBER_MS ? r : undefined;
}
