/**
 * `/volumes` (API key) and `/volumecontent/:volumeID/...` (the volume's own
 * bearer token) routes of the local service.
 *
 * @module
 */
import { errnoReport } from "../../../wire/errno";
import { z } from "zod";
import { codeForStatus } from "../../../wire/control-status";
import { serviceError, parseWith, type ControlRequest, type Route } from "../http";
import { parseVolumePath, type VolumePath } from "./confine";
import {
  listDir,
  makeDir,
  openForRead,
  removePath,
  statPath,
  updateMetadata,
  writeFile,
  type CreateOptions,
} from "./content";
import type { VolumeRecord, VolumeStore } from "./store";

const MAX_DEPTH = 64;

/** The `VolumeAndToken` body. */
function volumeAndToken(store: VolumeStore, v: VolumeRecord): Record<string, unknown> {
  return { volumeID: v.volumeID, name: v.name, token: store.tokenOf(v.volumeID) };
}

/** Volume management routes. */
export function volumeRoutes(store: VolumeStore): Route[] {
  return [
    {
      method: "GET",
      pattern: "/volumes",
      handler: async () => ({
        status: 200,
        body: store.list().map((v) => ({ volumeID: v.volumeID, name: v.name })),
      }),
    },
    {
      method: "POST",
      pattern: "/volumes",
      handler: async (req) => {
        const body = await req.json();
        if (body === null || typeof body !== "object" || Array.isArray(body))
          throw serviceError(
            "invalid_argument",
            'body: expected a JSON object like {"name": "my-volume"}',
          );
        const { name, sizeMB } = body as Record<string, unknown>;
        const v = await store.create(name, sizeMB);
        return { status: 201, body: volumeAndToken(store, v) };
      },
    },
    {
      method: "GET",
      pattern: "/volumes/:volumeID",
      handler: async (req) => ({
        status: 200,
        body: volumeAndToken(store, store.get(req.params.volumeID ?? "")),
      }),
    },
    {
      method: "DELETE",
      pattern: "/volumes/:volumeID",
      handler: async (req) => {
        await store.delete(req.params.volumeID ?? "");
        return { status: 204 };
      },
    },
  ];
}

/**
 * Owners a volume entry may be given: the ids a sandbox has (0 to 65535
 * inside, stored as is through the idmapped mount); anything else would be
 * a host user's file in a directory sandboxes share.
 */
const SANDBOX_ID_MAX = 65_535;
const idMessage = `must be an id inside the sandbox, 0 to ${SANDBOX_ID_MAX} (0 is root, 1000 is user): pass the id as a sandbox sees it`;
/**
 * Modes: permission bits only. Setuid, setgid and sticky bits (07000) are
 * refused: a setuid binary planted in a volume is one more thing a host user
 * or a sandbox could run with someone else's rights.
 */
const modeMessage =
  "must be permission bits 0 to 0o777 (511): setuid, setgid and sticky bits (0o7000) are refused on volume entries; drop them, e.g. 0o755 (493)";
const sandboxId = (n: z.ZodNumber) =>
  n.int(idMessage).min(0, idMessage).max(SANDBOX_ID_MAX, idMessage);
const permissionBits = (n: z.ZodNumber) =>
  n.int(modeMessage).min(0, modeMessage).max(0o777, modeMessage);
const createQuery = z.object({
  uid: sandboxId(z.coerce.number()).optional(),
  gid: sandboxId(z.coerce.number()).optional(),
  mode: permissionBits(z.coerce.number()).optional(),
  force: z.enum(["true", "false"]).optional(),
});
const metadataBody = z.strictObject({
  uid: sandboxId(z.number()).optional(),
  gid: sandboxId(z.number()).optional(),
  mode: permissionBits(z.number()).optional(),
});
const depthQuery = z.object({ depth: z.coerce.number().int().min(1).max(MAX_DEPTH).optional() });

/** The volume content routes; each checks the volume's bearer token itself. */
export function volumeContentRoutes(store: VolumeStore): Route[] {
  /** Authenticates and resolves the volume root and the `path` query. */
  const target = (req: ControlRequest): { root: string; p: VolumePath } => {
    const volumeID = req.params.volumeID ?? "";
    const auth = req.headers.authorization;
    const token = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice(7) : "";
    // The token check comes first, so nobody without it learns whether a volume exists.
    if (!token || !store.tokenMatches(volumeID, token))
      throw serviceError(
        "unauthenticated",
        "missing or invalid volume token: send 'Authorization: Bearer <token>' with the token of GET /volumes/{volumeID}",
      );
    store.get(volumeID);
    return { root: store.dataPath(volumeID), p: parseVolumePath(req.query.get("path")) };
  };
  const createOptions = (req: ControlRequest): CreateOptions => {
    const q = parseWith(createQuery, Object.fromEntries(req.query), "query");
    return { uid: q.uid, gid: q.gid, mode: q.mode, force: q.force === "true" };
  };
  const base = "/volumecontent/:volumeID";
  const routes: Route[] = [
    {
      method: "GET",
      pattern: `${base}/path`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        return { status: 200, body: await statPath(root, p) };
      },
    },
    {
      method: "PATCH",
      pattern: `${base}/path`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        const change = parseWith(metadataBody, (await req.json()) ?? {}, "body");
        return { status: 200, body: await updateMetadata(root, p, change) };
      },
    },
    {
      method: "DELETE",
      pattern: `${base}/path`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        await removePath(root, p);
        return { status: 204 };
      },
    },
    {
      method: "GET",
      pattern: `${base}/dir`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        const { depth } = parseWith(depthQuery, Object.fromEntries(req.query), "query");
        return { status: 200, body: await listDir(root, p, depth ?? 1) };
      },
    },
    {
      method: "POST",
      pattern: `${base}/dir`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        return { status: 201, body: await makeDir(root, p, createOptions(req)) };
      },
    },
    {
      method: "GET",
      pattern: `${base}/file`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        // No Content-Length: a sandbox may be growing the file while it is read.
        const { stream } = await openForRead(root, p);
        return { status: 200, headers: { "Content-Type": "application/octet-stream" }, stream };
      },
    },
    {
      method: "PUT",
      pattern: `${base}/file`,
      auth: "none",
      handler: async (req) => {
        const { root, p } = target(req);
        return { status: 201, body: await writeFile(root, p, req.raw, createOptions(req)) };
      },
    },
  ];
  return routes.map((route) => ({ ...route, handler: clientFsErrors(route.handler) }));
}

/**
 * A file-system error caused by the path a client asked for (a name too long,
 * a file where a directory is needed, ...) is the client's mistake: it answers
 * 4xx with the errno table's reason (`src/wire/errno.ts`) and the path as the
 * client wrote it, never a 500 (nor the host path Node's message holds).
 */
function clientFsErrors(handler: Route["handler"]): Route["handler"] {
  return async (req) => {
    try {
      return await handler(req);
    } catch (err) {
      const report = errnoReport(err);
      if (!report) throw err;
      throw serviceError(
        codeForStatus(report.status),
        `'${req.query.get("path") ?? ""}': ${report.reason}`,
        {
          status: report.status,
        },
      );
    }
  };
}
