/**
 * Volumes and their content API. Content calls authenticate with the
 * volume's own token (`Authorization: Bearer`), and file bodies are streamed
 * both ways: nothing holds a whole file in memory.
 *
 * @module
 */
import { z } from "zod";
import { invalidArgument } from "../../errors";
import { checkId } from "./args";
import { type CallContext, type CallOptions, invoke } from "./call";
import {
  type Volume,
  type VolumeAndToken,
  type VolumeEntryStat,
  VolumeAndTokenSchema,
  VolumeEntryStatSchema,
  VolumeSchema,
} from "./volume.schemas";
import { parseArgs } from "./validate";

/** Owner, mode and parent creation of a created entry. */
export interface VolumeCreateOptions {
  /** @default 1000 (the sandbox's `user`) */
  uid?: number | undefined;
  /** @default 1000 */
  gid?: number | undefined;
  /** @default 0o644 for files, 0o755 for directories */
  mode?: number | undefined;
  /** Create missing parents (and accept an existing directory). @default false */
  force?: boolean | undefined;
}

/** A file body to upload: bytes, text or a stream (sent as it is read). */
export type VolumeFileBody = string | Uint8Array | ReadableStream<Uint8Array>;

/** The volume being addressed by content calls: its id and token. */
export interface VolumeRef {
  volumeID: string;
  token: string;
}

/** Volume methods of the control client. */
export interface VolumeMethods {
  /** `POST /volumes` (201). Never retried. */
  createVolume(name: string, options?: CallOptions): Promise<VolumeAndToken>;
  /** `GET /volumes/{volumeID}`: the volume and its content token. */
  getVolume(volumeID: string, options?: CallOptions): Promise<VolumeAndToken>;
  /** `GET /volumes`. */
  listVolumes(options?: CallOptions): Promise<Volume[]>;
  /** `DELETE /volumes/{volumeID}` (204). */
  deleteVolume(volumeID: string, options?: CallOptions): Promise<void>;
  /** `GET /volumecontent/{id}/path`. */
  statVolumePath(vol: VolumeRef, path: string, options?: CallOptions): Promise<VolumeEntryStat>;
  /** `GET /volumecontent/{id}/dir`, `depth` levels (default 1). */
  listVolumeDir(
    vol: VolumeRef,
    path: string,
    depth?: number,
    options?: CallOptions,
  ): Promise<VolumeEntryStat[]>;
  /** `POST /volumecontent/{id}/dir` (201). */
  makeVolumeDir(
    vol: VolumeRef,
    path: string,
    create?: VolumeCreateOptions,
    options?: CallOptions,
  ): Promise<VolumeEntryStat>;
  /** `PATCH /volumecontent/{id}/path`. */
  updateVolumePath(
    vol: VolumeRef,
    path: string,
    change: { uid?: number; gid?: number; mode?: number },
    options?: CallOptions,
  ): Promise<VolumeEntryStat>;
  /** `DELETE /volumecontent/{id}/path` (204): a directory with everything below it. */
  removeVolumePath(vol: VolumeRef, path: string, options?: CallOptions): Promise<void>;
  /** `GET /volumecontent/{id}/file`: the bytes as a stream. */
  readVolumeFile(
    vol: VolumeRef,
    path: string,
    options?: CallOptions,
  ): Promise<ReadableStream<Uint8Array>>;
  /** `PUT /volumecontent/{id}/file` (201). A streamed body is never retried. */
  writeVolumeFile(
    vol: VolumeRef,
    path: string,
    body: VolumeFileBody,
    create?: VolumeCreateOptions,
    options?: CallOptions,
  ): Promise<VolumeEntryStat>;
}

const VolumeName = z.object({ name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/) });
const ContentPath = z.object({ path: z.string().min(1) });
const uint32 = z.int().min(0).max(4_294_967_295);
const CreateArgs = z.object({
  uid: uint32.optional(),
  gid: uint32.optional(),
  mode: z.int().min(0).max(0o7777).optional(),
  force: z.boolean().optional(),
});
const ChangeArgs = z.strictObject({
  uid: uint32.optional(),
  gid: uint32.optional(),
  mode: z.int().min(0).max(0o7777).optional(),
});
const Depth = z.object({ depth: z.int().min(1).max(64).optional() });

/** Builds the {@link VolumeMethods} over `ctx`. */
export function volumeMethods(ctx: CallContext): VolumeMethods {
  /** The per-call options with the volume's bearer token added. */
  const withToken = (vol: VolumeRef, op: string, options?: CallOptions): CallOptions => {
    if (typeof vol?.token !== "string" || vol.token === "")
      throw invalidArgument(op, "token", undefined, "the volume's token", "use getVolume first");
    return {
      ...options,
      headers: { ...options?.headers, Authorization: `Bearer ${vol.token}` },
    };
  };
  const target = (op: string, vol: VolumeRef, path: string) => ({
    volumeID: checkId(op, "volumeID", vol?.volumeID),
    path: parseArgs(ContentPath, { path }, op).path,
  });

  return {
    async createVolume(name, options) {
      const body = parseArgs(VolumeName, { name }, "volumes.create");
      const spec = {
        operation: "volumes.create",
        success: [201],
        schema: VolumeAndTokenSchema,
      } as const;
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/volumes", { body, ...init }),
      );
      return data;
    },
    async getVolume(volumeID, options) {
      const id = checkId("volumes.get", "volumeID", volumeID);
      const spec = {
        operation: "volumes.get",
        resourceId: id,
        success: [200],
        schema: VolumeAndTokenSchema,
      } as const;
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/volumes/{volumeID}", { params: { path: { volumeID: id } }, ...init }),
      );
      return data;
    },
    async listVolumes(options) {
      const spec = {
        operation: "volumes.list",
        success: [200],
        schema: z.array(VolumeSchema),
      } as const;
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/volumes", { ...init }),
      );
      return data;
    },
    async deleteVolume(volumeID, options) {
      const id = checkId("volumes.delete", "volumeID", volumeID);
      const spec = {
        operation: "volumes.delete",
        resourceId: id,
        success: [204],
        schema: undefined,
      } as const;
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/volumes/{volumeID}", { params: { path: { volumeID: id } }, ...init }),
      );
    },
    async statVolumePath(vol, path, options) {
      const op = "volumes.stat";
      const t = target(op, vol, path);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [200],
        schema: VolumeEntryStatSchema,
      } as const;
      const { data } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.GET("/volumecontent/{volumeID}/path", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path } },
          ...init,
        }),
      );
      return data;
    },
    async listVolumeDir(vol, path, depth, options) {
      const op = "volumes.listDir";
      const t = target(op, vol, path);
      const d = parseArgs(Depth, { depth }, op);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [200],
        schema: z.array(VolumeEntryStatSchema),
      } as const;
      const { data } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.GET("/volumecontent/{volumeID}/dir", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path, ...d } },
          ...init,
        }),
      );
      return data;
    },
    async makeVolumeDir(vol, path, create, options) {
      const op = "volumes.makeDir";
      const t = target(op, vol, path);
      const q = parseArgs(CreateArgs, create ?? {}, op);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [201],
        schema: VolumeEntryStatSchema,
      } as const;
      const { data } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.POST("/volumecontent/{volumeID}/dir", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path, ...q } },
          ...init,
        }),
      );
      return data;
    },
    async updateVolumePath(vol, path, change, options) {
      const op = "volumes.updatePath";
      const t = target(op, vol, path);
      const body = parseArgs(ChangeArgs, change, op);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [200],
        schema: VolumeEntryStatSchema,
      } as const;
      const { data } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.PATCH("/volumecontent/{volumeID}/path", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path } },
          body,
          ...init,
        }),
      );
      return data;
    },
    async removeVolumePath(vol, path, options) {
      const op = "volumes.removePath";
      const t = target(op, vol, path);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [204],
        schema: undefined,
      } as const;
      await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.DELETE("/volumecontent/{volumeID}/path", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path } },
          ...init,
        }),
      );
    },
    async readVolumeFile(vol, path, options) {
      const op = "volumes.readFile";
      const t = target(op, vol, path);
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [200],
        schema: undefined,
      } as const;
      const { response } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.GET("/volumecontent/{volumeID}/file", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path } },
          parseAs: "stream",
          ...init,
        }),
      );
      return response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    },
    async writeVolumeFile(vol, path, body, create, options) {
      const streamed = body instanceof ReadableStream;
      const op = streamed ? "volumes.writeFileStream" : "volumes.writeFile";
      const t = target(op, vol, path);
      const q = parseArgs(CreateArgs, create ?? {}, op);
      if (!streamed && typeof body !== "string" && !(body instanceof Uint8Array))
        throw invalidArgument(op, "body", typeof body, "a string, Uint8Array or ReadableStream");
      const spec = {
        operation: op,
        resourceId: t.volumeID,
        success: [201],
        schema: VolumeEntryStatSchema,
      } as const;
      const { data } = await invoke(ctx, spec, withToken(vol, op, options), (init) =>
        ctx.api.PUT("/volumecontent/{volumeID}/file", {
          params: { path: { volumeID: t.volumeID }, query: { path: t.path, ...q } },
          body: body as unknown as string,
          bodySerializer: (b: unknown) => b,
          headers: { ...init.headers, "Content-Type": "application/octet-stream" },
          signal: init.signal,
          ...(streamed ? { duplex: "half" } : {}),
        } as never),
      );
      return data;
    },
  };
}
