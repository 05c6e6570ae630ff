/**
 * The sandbox's users and groups, parsed from its own /etc/passwd and /etc/group
 * (the agent never relies on getent or NSS).
 *
 * @module
 */
import * as fs from "node:fs";
import { GROUP_FILE, PASSWD_FILE } from "./constants";

/** One user of the sandbox. */
export interface SandboxUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

interface Cached<T> {
  mtimeMs: number;
  size: number;
  value: T;
}

const cache = new Map<string, Cached<unknown>>();

/** Reads and parses a colon-separated database, re-reading only when the file changed. */
function readDb<T>(file: string, parse: (lines: string[][]) => T): T {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return parse([]);
  }
  const hit = cache.get(file) as Cached<T> | undefined;
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.value;
  const rows = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => l.split(":"));
  const value = parse(rows);
  cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, value });
  return value;
}

function passwd(): Map<string, SandboxUser> {
  return readDb(PASSWD_FILE, (rows) => {
    const m = new Map<string, SandboxUser>();
    for (const r of rows) {
      if (r.length < 7) continue;
      const uid = Number(r[2]);
      const gid = Number(r[3]);
      if (!Number.isInteger(uid) || !Number.isInteger(gid)) continue;
      m.set(r[0], { name: r[0], uid, gid, home: r[5] || "/", shell: r[6] || "/bin/sh" });
    }
    return m;
  });
}

function groups(): Map<number, string> {
  return readDb(GROUP_FILE, (rows) => {
    const m = new Map<number, string>();
    for (const r of rows) {
      const gid = Number(r[2]);
      if (r.length >= 3 && Number.isInteger(gid) && !m.has(gid)) m.set(gid, r[0]);
    }
    return m;
  });
}

/** The user named `name`, or undefined when the sandbox has no such user. */
export function lookupUser(name: string): SandboxUser | undefined {
  return passwd().get(name);
}

/** The user name for `uid`, or the number as a string when unknown. */
export function userName(uid: number): string {
  for (const u of passwd().values()) if (u.uid === uid) return u.name;
  return String(uid);
}

/** The group name for `gid`, or the number as a string when unknown. */
export function groupName(gid: number): string {
  return groups().get(gid) ?? String(gid);
}
