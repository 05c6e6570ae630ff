/**
 * `POST /files/compose`: concatenates files in order into `destination`, then
 * deletes the sources (wire-protocol.md 8.1). The bytes never pass through
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
import { HttpError, readJson, sendJson } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";

interface ComposeBody {
  source_paths?: unknown;
  destination?: unknown;
  username?: unknown;
}

function runCat(sources: string[], out: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/cat", ["--", ...sources], { stdio: ["ignore", out, "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve();
      else if (/no space left/i.test(stderr))
        reject(new HttpError(507, "not enough disk space to compose the files"));
      else
        reject(
          new HttpError(
            500,
            `concatenating the files failed: ${stderr.trim() || `cat exited with ${code}`}`,
          ),
        );
    });
  });
}

/** Serves `POST /files/compose`. */
export async function composeFiles(ctx: RouteContext): Promise<void> {
  const body = (await readJson(ctx.req)) as ComposeBody;
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
  await makeDirsAs(path.dirname(destination), user);
  const tmp = path.join(
    path.dirname(destination),
    `.${path.basename(destination)}.compose-${randomBytes(6).toString("hex")}`,
  );
  const fd = await fs.promises.open(tmp, "wx", 0o644);
  try {
    await runCat(sources, fd.fd);
    await fd.chown(user.uid, user.gid);
    await fd.close();
    await fs.promises.rename(tmp, destination);
  } catch (err) {
    await fd.close().catch(() => undefined);
    await fs.promises.rm(tmp, { force: true });
    if (err instanceof HttpError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new HttpError(
      code === "ENOSPC" ? 507 : 500,
      `composing '${destination}' failed: ${code ?? (err as Error).message}`,
    );
  }
  for (const src of new Set(sources)) await fs.promises.rm(src, { force: true });
  sendJson(ctx.res, 200, { path: destination, name: path.basename(destination), type: "file" });
}
