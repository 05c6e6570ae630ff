/**
 * Volumes and their content API. Content calls authenticate with the
 * volume's own token (`Authorization: Bearer`), and file bodies are streamed
 * both ways: nothing holds a whole file in memory.
 *
 * @module
 */
import { z } from "zod";
import { invalidArgument } from "../../errors";
import { VOLUME_NAME_PATTERN } from "../../wire/ids";
import { checkId } from "./args";
import {
  type AttemptInit,
  type CallContext,
  type CallOptions,
  callSpec,
  invoke,
  type RawResult,
} from "./call";
import type { OperationName } from "./operations";
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

const VolumeName = z.object({ name: z.string().regex(VOLUME_NAME_PATTERN) });
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
  /**
   * The parts every content call shares, checked in this order: the volume ID
   * and path, then the call's own query (`query`), then the volume's token.
   */
  const content = <S extends z.ZodType | undefined, Q extends object = object>(
    call: { op: OperationName; success: number; schema: S },
    vol: VolumeRef,
    path: string,
    options: CallOptions | undefined,
    query: () => Q = () => ({}) as Q,
  ) => {
    const volumeID = checkId(call.op, "volumeID", vol?.volumeID);
    const checked = { path: parseArgs(ContentPath, { path }, call.op).path, ...query() };
    const spec = callSpec(call.op, [call.success], call.schema, volumeID);
    const callOptions = withToken(vol, call.op, options);
    const params = { path: { volumeID }, query: checked };
    return {
      /** Sends the call (`send` makes one attempt with the checked `params`), retried as its operation allows. */
      send: (send: (p: typeof params, init: AttemptInit) => Promise<RawResult>) =>
        invoke(ctx, spec, callOptions, (init) => send(params, init)),
    };
  };

  return {
    async createVolume(name, options) {
      const body = parseArgs(VolumeName, { name }, "volumes.create");
      const spec = callSpec("volumes.create", [201], VolumeAndTokenSchema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/volumes", { body, ...init }),
      );
      return data;
    },
    async getVolume(volumeID, options) {
      const id = checkId("volumes.get", "volumeID", volumeID);
      const spec = callSpec("volumes.get", [200], VolumeAndTokenSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/volumes/{volumeID}", { params: { path: { volumeID: id } }, ...init }),
      );
      return data;
    },
    async listVolumes(options) {
      const spec = callSpec("volumes.list", [200], z.array(VolumeSchema));
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/volumes", { ...init }),
      );
      return data;
    },
    async deleteVolume(volumeID, options) {
      const id = checkId("volumes.delete", "volumeID", volumeID);
      const spec = callSpec("volumes.delete", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/volumes/{volumeID}", { params: { path: { volumeID: id } }, ...init }),
      );
    },
    async statVolumePath(vol, path, options) {
      const call = { op: "volumes.stat", success: 200, schema: VolumeEntryStatSchema } as const;
      const { data } = await content(call, vol, path, options).send((params, init) =>
        ctx.api.GET("/volumecontent/{volumeID}/path", { params, ...init }),
      );
      return data;
    },
    async listVolumeDir(vol, path, depth, options) {
      const op = "volumes.listDir";
      const call = { op, success: 200, schema: z.array(VolumeEntryStatSchema) } as const;
      const { data } = await content(call, vol, path, options, () =>
        parseArgs(Depth, { depth }, op),
      ).send((params, init) => ctx.api.GET("/volumecontent/{volumeID}/dir", { params, ...init }));
      return data;
    },
    async makeVolumeDir(vol, path, create, options) {
      const op = "volumes.makeDir";
      const call = { op, success: 201, schema: VolumeEntryStatSchema } as const;
      const { data } = await content(call, vol, path, options, () =>
        parseArgs(CreateArgs, create ?? {}, op),
      ).send((params, init) => ctx.api.POST("/volumecontent/{volumeID}/dir", { params, ...init }));
      return data;
    },
    async updateVolumePath(vol, path, change, options) {
      const op = "volumes.updatePath";
      const c = content({ op, success: 200, schema: VolumeEntryStatSchema }, vol, path, options);
      const body = parseArgs(ChangeArgs, change, op);
      const { data } = await c.send((params, init) =>
        ctx.api.PATCH("/volumecontent/{volumeID}/path", { params, body, ...init }),
      );
      return data;
    },
    async removeVolumePath(vol, path, options) {
      const call = { op: "volumes.removePath", success: 204, schema: undefined } as const;
      await content(call, vol, path, options).send((params, init) =>
        ctx.api.DELETE("/volumecontent/{volumeID}/path", { params, ...init }),
      );
    },
    async readVolumeFile(vol, path, options) {
      const call = { op: "volumes.readFile", success: 200, schema: undefined } as const;
      const { response } = await content(call, vol, path, options).send((params, init) =>
        ctx.api.GET("/volumecontent/{volumeID}/file", {
          params,
          parseAs: "stream",
          ...init,
        }),
      );
      return response.body ?? new ReadableStream<Uint8Array>({ start: (ctl) => ctl.close() });
    },
    async writeVolumeFile(vol, path, body, create, options) {
      const streamed = body instanceof ReadableStream;
      const op = streamed ? "volumes.writeFileStream" : "volumes.writeFile";
      const c = content(
        { op, success: 201, schema: VolumeEntryStatSchema },
        vol,
        path,
        options,
        () => parseArgs(CreateArgs, create ?? {}, op),
      );
      if (!streamed && typeof body !== "string" && !(body instanceof Uint8Array))
        throw invalidArgument(op, "body", typeof body, "a string, Uint8Array or ReadableStream");
      const { data } = await c.send((params, init) =>
        ctx.api.PUT("/volumecontent/{volumeID}/file", {
          params,
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
