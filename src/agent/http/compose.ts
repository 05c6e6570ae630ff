/**
 * `POST /files/compose`: concatenates files in order into `destination`, then
 * deletes the sources (docs/envd.md#files-and-compose). The bytes never pass through
 * Node: `cat` (copy_file_range in coreutils 9) writes a temporary file next to
 * the destination, which is then renamed onto it.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeDirsAs } from "../filesystem/ownership";
import { AGENT_TEMP_PREFIX, noteReplace } from "../filesystem/replaced-files";
import { httpFsError } from "./fs-error";
import { HttpError, readJson, sendJson } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";

interface ComposeBody {
  source_paths?: unknown;
  destination?: unknown;
  username?: unknown;
}

/**
 * What `cat`'s failure means for the caller. GNU cat reports a failed write
 * as `cat: write error: <reason>` and a failed read as `cat: <source>:
 * <reason>`: a source the caller named that cannot be read (a `/proc` file
 * whose read fails, say) is the caller's mistake, not the service's.
 */
function catFailure(stderr: string, code: number | null): HttpError {
  const said = stderr.trim().replace(/^\/bin\/cat: /gm, "");
  if (/no space left|quota exceeded/i.test(said))
    return new HttpError(507, "not enough disk space to compose the files");
  if (said === "" || /^write error/m.test(said))
    return new HttpError(
      500,
      `writing the composed file failed: ${said || `cat exited with ${code}`}`,
    );
  return new HttpError(
    400,
    `a source cannot be read (${said}): compose only sources whose content can be read`,
  );
}

function runCat(sources: string[], out: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/cat", ["--", ...sources], { stdio: ["ignore", out, "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(catFailure(stderr, code));
    });
  });
}

/** Serves `POST /files/compose`. */
export async function composeFiles(ctx: RouteContext): Promise<void> {
  const parsed = await readJson(ctx.req);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new HttpError(
      400,
      `the compose body must be a JSON object {source_paths, destination}, got ${JSON.stringify(parsed)?.slice(0, 64)}`,
    );
  }
  const body = parsed as ComposeBody;
  const sourcesIn = body.source_paths;
  if (
    !Array.isArray(sourcesIn) ||
    sourcesIn.length === 0 ||
    !sourcesIn.every((s) => typeof s === "string")
  ) {
    throw new HttpError(400, "source_paths must be a non-empty array of paths");
  }
  if (typeof body.destination !== "string" || body.destination === "") {
    throw new HttpError(400, "destination must be a non-empty path");
  }
  const user = httpUser(ctx, typeof body.username === "string" ? body.username : null);
  const destination = httpPath(ctx, user, body.destination);
  const sources = sourcesIn.map((s) => httpPath(ctx, user, s));
  for (const src of sources) {
    if (src === destination)
      throw new HttpError(400, `source '${src}' is the destination: choose another destination`);
    const st = await fs.promises.stat(src).catch(() => undefined);
    if (!st) throw new HttpError(404, `source file not found: ${src}`);
    if (!st.isFile()) throw new HttpError(400, `source '${src}' is not a regular file`);
  }
  const tmp = path.join(
    path.dirname(destination),
    `${AGENT_TEMP_PREFIX}compose-${randomBytes(6).toString("hex")}`,
  );
  let fd: fs.promises.FileHandle;
  try {
    const dst = await fs.promises.stat(destination).catch(() => undefined);
    if (dst?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    await makeDirsAs(path.dirname(destination), user);
    fd = await fs.promises.open(tmp, "wx", 0o644);
  } catch (err) {
    throw httpFsError(err, `cannot write '${destination}'`);
  }
  try {
    await runCat(sources, fd.fd);
    await fd.chown(user.uid, user.gid);
    await fd.close();
    noteReplace(destination, !(await fs.promises.lstat(destination).catch(() => undefined)));
    await fs.promises.rename(tmp, destination);
  } catch (err) {
    await fd.close().catch(() => undefined);
    await fs.promises.rm(tmp, { force: true });
    throw httpFsError(err, `composing '${destination}' failed`);
  }
  for (const src of new Set(sources)) {
    // A source that cannot be deleted (one under /proc, say) is the caller's
    // path at fault: the errno table gives its 4xx.
    await fs.promises.rm(src, { force: true }).catch((err: unknown) => {
      throw httpFsError(err, `composed '${destination}' but cannot delete the source '${src}'`);
    });
  }
  sendJson(ctx.res, 200, { path: destination, name: path.basename(destination), type: "file" });
}
