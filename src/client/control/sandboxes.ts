/**
 * Sandbox lifecycle calls: create, get, connect, resume, pause, timeout,
 * refresh, kill, and the network update. Reference: docs/control-api.md#sandbox-endpoints.
 *
 * @module
 */

import { registerSecret } from "../../errors";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import {
  checkSandboxID,
  ConnectArgs,
  ConnectV2Args,
  NetworkUpdateArgs,
  NewSandboxArgs,
  NewSandboxV2Args,
  PauseArgs,
  RefreshArgs,
  ResumeArgs,
  TimeoutArgs,
} from "./args";
import { SandboxDetailSchema, SandboxSchema } from "./sandbox.schemas";
import type {
  ConnectSandbox,
  ConnectSandboxV2,
  NewSandbox,
  NewSandboxV2,
  ResumedSandbox,
  Sandbox,
  SandboxDetail,
  SandboxNetworkUpdate,
} from "./types";
import { parseArgs } from "./validate";

/** The answer of a connect call. */
export interface ConnectedSandbox {
  sandbox: Sandbox;
  /** True when the sandbox was paused and has been resumed (HTTP 201), false when it was running (200). */
  resumed: boolean;
}

/** Sandbox lifecycle methods of the control client. */
export interface SandboxMethods {
  /** `POST /sandboxes` (201). A token is issued only with `secure: true`. Never retried. */
  createSandbox(body: NewSandbox, options?: CallOptions): Promise<Sandbox>;
  /** `POST /v2/sandboxes` (201). Every v2 sandbox is secured. Never retried. */
  createSandboxV2(body: NewSandboxV2, options?: CallOptions): Promise<Sandbox>;
  /** `GET /sandboxes/{sandboxID}`: running or paused. */
  getSandbox(sandboxID: string, options?: CallOptions): Promise<SandboxDetail>;
  /** `DELETE /sandboxes/{sandboxID}` (204). A missing sandbox fails with `not_found`. */
  killSandbox(sandboxID: string, options?: CallOptions): Promise<void>;
  /** `POST /sandboxes/{sandboxID}/connect`: extends a running sandbox's TTL or resumes a paused one. */
  connectSandbox(
    sandboxID: string,
    body: ConnectSandbox,
    options?: CallOptions,
  ): Promise<ConnectedSandbox>;
  /** `POST /v2/sandboxes/{sandboxID}/connect`. */
  connectSandboxV2(
    sandboxID: string,
    body?: ConnectSandboxV2,
    options?: CallOptions,
  ): Promise<ConnectedSandbox>;
  /** `POST /sandboxes/{sandboxID}/resume` (201; deprecated, prefer connect). Never retried. */
  resumeSandbox(sandboxID: string, body?: ResumedSandbox, options?: CallOptions): Promise<Sandbox>;
  /**
   * `POST /sandboxes/{sandboxID}/pause` (204). Pausing a paused sandbox fails with `conflict`.
   * @param body.memory - @default true (a memory snapshot; false keeps only the filesystem)
   */
  pauseSandbox(
    sandboxID: string,
    body?: { memory?: boolean },
    options?: CallOptions,
  ): Promise<void>;
  /** `POST /sandboxes/{sandboxID}/timeout` (204): the sandbox ends `timeoutSeconds` from now, which may shorten it. */
  setSandboxTimeout(
    sandboxID: string,
    timeoutSeconds: number,
    options?: CallOptions,
  ): Promise<void>;
  /**
   * `POST /sandboxes/{sandboxID}/refreshes` (204): extends the TTL only.
   * @param durationSeconds - 0..3600 @default the service's 15 s
   */
  refreshSandbox(sandboxID: string, durationSeconds?: number, options?: CallOptions): Promise<void>;
  /**
   * `PUT /sandboxes/{sandboxID}/network` (204): replaces the sandbox's egress
   * configuration while it runs. As on E2B, a field left out is cleared: an
   * update without `egressProxy` stops tunneling, so repeat it in every
   * update that should keep it. The proxy's password is sent, never shown:
   * `getSandbox` answers `network.egressProxy` as `{ address, username }`,
   * and errors and log lines carry it redacted.
   */
  updateSandboxNetwork(
    sandboxID: string,
    body: SandboxNetworkUpdate,
    options?: CallOptions,
  ): Promise<void>;
}

/** Builds the {@link SandboxMethods} over `ctx`. */
export function sandboxMethods(ctx: CallContext): SandboxMethods {
  return {
    async createSandbox(body, options) {
      const parsed = parseArgs(NewSandboxArgs, body, "sandboxes.create") as NewSandbox;
      const spec = callSpec("sandboxes.create", [201], SandboxSchema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes", { body: parsed, ...init }),
      );
      return data;
    },

    async createSandboxV2(body, options) {
      const parsed = parseArgs(NewSandboxV2Args, body, "sandboxes.createV2") as NewSandboxV2;
      const spec = callSpec("sandboxes.createV2", [201], SandboxSchema);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/v2/sandboxes", { body: parsed, ...init }),
      );
      return data;
    },

    async getSandbox(sandboxID, options) {
      const id = checkSandboxID("sandboxes.get", sandboxID);
      const spec = callSpec("sandboxes.get", [200], SandboxDetailSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.GET("/sandboxes/{sandboxID}", { params: { path: { sandboxID: id } }, ...init }),
      );
      return data;
    },

    async killSandbox(sandboxID, options) {
      const id = checkSandboxID("sandboxes.kill", sandboxID);
      const spec = callSpec("sandboxes.kill", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.DELETE("/sandboxes/{sandboxID}", { params: { path: { sandboxID: id } }, ...init }),
      );
    },

    async connectSandbox(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.connect", sandboxID);
      const parsed = parseArgs(ConnectArgs, body, "sandboxes.connect");
      const spec = callSpec("sandboxes.connect", [200, 201], SandboxSchema, id);
      const { data, response } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/connect", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
      return { sandbox: data, resumed: response.status === 201 };
    },

    async connectSandboxV2(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.connectV2", sandboxID);
      const parsed = parseArgs(ConnectV2Args, body ?? {}, "sandboxes.connectV2");
      const spec = callSpec("sandboxes.connectV2", [200, 201], SandboxSchema, id);
      const { data, response } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/v2/sandboxes/{sandboxID}/connect", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
      return { sandbox: data, resumed: response.status === 201 };
    },

    async resumeSandbox(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.resume", sandboxID);
      const parsed = parseArgs(ResumeArgs, body ?? {}, "sandboxes.resume");
      const spec = callSpec("sandboxes.resume", [201], SandboxSchema, id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/resume", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
      return data;
    },

    async pauseSandbox(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.pause", sandboxID);
      const parsed = parseArgs(PauseArgs, body ?? {}, "sandboxes.pause");
      const spec = callSpec("sandboxes.pause", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/pause", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
    },

    async setSandboxTimeout(sandboxID, timeoutSeconds, options) {
      const id = checkSandboxID("sandboxes.setTimeout", sandboxID);
      const body = parseArgs(TimeoutArgs, { timeout: timeoutSeconds }, "sandboxes.setTimeout");
      const spec = callSpec("sandboxes.setTimeout", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/timeout", {
          params: { path: { sandboxID: id } },
          body,
          ...init,
        }),
      );
    },

    async refreshSandbox(sandboxID, durationSeconds, options) {
      const id = checkSandboxID("sandboxes.refresh", sandboxID);
      const body = parseArgs(RefreshArgs, { duration: durationSeconds }, "sandboxes.refresh");
      const spec = callSpec("sandboxes.refresh", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/refreshes", {
          params: { path: { sandboxID: id } },
          body,
          ...init,
        }),
      );
    },

    async updateSandboxNetwork(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.updateNetwork", sandboxID);
      // Before anything can echo it: an argument error shows the value it got.
      registerSecret((body as Partial<SandboxNetworkUpdate> | undefined)?.egressProxy?.password);
      const parsed = parseArgs(
        NetworkUpdateArgs,
        body,
        "sandboxes.updateNetwork",
      ) as SandboxNetworkUpdate;
      const spec = callSpec("sandboxes.updateNetwork", [204], undefined, id);
      await invoke(ctx, spec, options, (init) =>
        ctx.api.PUT("/sandboxes/{sandboxID}/network", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
    },
  };
}
