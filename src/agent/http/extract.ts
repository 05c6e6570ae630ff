/**
 * Internal `POST /_sandbox-iac/extract?path=<dir>&username=<u>`: unpacks a tar
 * (gzip detected from the magic bytes) into a directory, owned by the user.
 * The control service uses it to copy template files in.
 *
 * @module
 */
import { pipeline } from "node:stream/promises";
import { FILES_QUERY } from "../../wire/envd";
import { makeDirsAs } from "../filesystem/ownership";
import { requestBody } from "./early-answer";
import { HttpError, sendJson } from "./respond";
import { httpPath, httpUser, type RouteContext } from "./route-context";
import { SandboxIacError } from "../../errors";

/**
 * `tar`, loaded on the first extraction: most sandboxes never extract, and
 * every agent start would otherwise evaluate it.
 */
function tarModule(): typeof import("tar") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("tar") as typeof import("tar");
}

/** Serves the extract route. */
export async function extractArchive(ctx: RouteContext): Promise<void> {
  const user = httpUser(ctx);
  const dir = httpPath(ctx, user, ctx.url.searchParams.get(FILES_QUERY.path) ?? "");
  await makeDirsAs(dir, user);
  let files = 0;
  const unpack = tarModule().x({
    cwd: dir,
    uid: user.uid,
    gid: user.gid,
    // Keep the archive's modes exactly; the agent's umask must not narrow them.
    noChmod: false,
    processUmask: 0,
    onReadEntry: (entry) => {
      if (entry.type === "File" || entry.type === "OldFile" || entry.type === "ContiguousFile")
        files++;
    },
  });
  try {
    // The request piped, not itself: a failed extraction must not reset the connection before its answer.
    await pipeline(requestBody(ctx.req), unpack);
  } catch (err) {
    throw new HttpError(
      400,
      `cannot extract the archive into '${dir}': ${SandboxIacError.from(err, { operation: "files.extract" }).reason}`,
    );
  }
  sendJson(ctx.res, 200, { files });
}
