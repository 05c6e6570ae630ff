/**
 * File metadata stored as `user.e2b.*` extended attributes.
 *
 * Node has no xattr API and the sandbox has no getfattr/setfattr, but it has the
 * host's python3, whose `os.getxattr`/`os.setxattr` are exact. One long-lived
 * python3 helper answers JSON-line requests so a Stat costs no process spawn.
 * Without python3, metadata is silently unsupported (reads return nothing).
 *
 * @module
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import { METADATA_XATTR_PREFIX } from "./constants";

const PYTHON = "/usr/bin/python3";

const HELPER = `
import json, os, sys
P = ${JSON.stringify(METADATA_XATTR_PREFIX)}
for line in sys.stdin:
    req = json.loads(line)
    out = {}
    try:
        if req["op"] == "get":
            res = []
            for p in req["paths"]:
                m = {}
                try:
                    for k in os.listxattr(p, follow_symlinks=False):
                        if k.startswith(P):
                            m[k[len(P):]] = os.getxattr(p, k, follow_symlinks=False).decode("utf-8", "replace")
                except OSError:
                    pass
                res.append(m)
            out = {"ok": res}
        else:
            p = req["path"]
            for k in os.listxattr(p):
                if k.startswith(P):
                    os.removexattr(p, k)
            for k, v in req["meta"].items():
                os.setxattr(p, P + k, v.encode("utf-8"))
            out = {"ok": True}
    except OSError as e:
        out = {"error": e.strerror or str(e)}
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
`;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

let helper: { proc: ChildProcessWithoutNullStreams; pending: Pending[] } | undefined;
let available: boolean | undefined;

function getHelper(): typeof helper {
  if (available === undefined) available = fs.existsSync(PYTHON);
  if (!available) return undefined;
  if (helper) return helper;
  const proc = spawn(PYTHON, ["-c", HELPER], { stdio: ["pipe", "pipe", "pipe"] });
  const h = { proc, pending: [] as Pending[] };
  let buf = "";
  proc.stdout.setEncoding("utf8");
  proc.stdout.on("data", (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const p = h.pending.shift();
      if (!p) continue;
      const msg = JSON.parse(line) as { ok?: unknown; error?: string };
      if (msg.error !== undefined) p.reject(new Error(msg.error));
      else p.resolve(msg.ok);
    }
  });
  const fail = () => {
    if (helper === h) helper = undefined;
    for (const p of h.pending.splice(0)) p.reject(new Error("metadata helper exited"));
  };
  proc.on("exit", fail);
  proc.on("error", fail);
  proc.stdin.on("error", () => undefined);
  // The helper must never keep the agent alive on its own.
  proc.unref();
  (proc.stdout as unknown as { unref?: () => void }).unref?.();
  (proc.stdin as unknown as { unref?: () => void }).unref?.();
  (proc.stderr as unknown as { unref?: () => void }).unref?.();
  helper = h;
  return h;
}

function call(req: object): Promise<unknown> {
  const h = getHelper();
  if (!h) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    h.pending.push({ resolve, reject });
    h.proc.stdin.write(JSON.stringify(req) + "\n");
  });
}

/** The metadata of each path (empty maps where none or unsupported), in order. */
export async function readMetadata(paths: string[]): Promise<Record<string, string>[]> {
  if (paths.length === 0) return [];
  try {
    const res = (await call({ op: "get", paths })) as Record<string, string>[] | undefined;
    return res ?? paths.map(() => ({}));
  } catch {
    return paths.map(() => ({}));
  }
}

/**
 * Replaces the whole metadata set of `path`.
 *
 * @returns false when metadata is unsupported in this sandbox.
 */
export async function writeMetadata(path: string, meta: Record<string, string>): Promise<boolean> {
  const res = await call({ op: "set", path, meta });
  return res !== undefined;
}
