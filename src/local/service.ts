/**
 * {@link startLocalService}: the embedded E2B-compatible sandbox service,
 * serving the control API and the sandbox interface on one port.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as http from "node:http";
import type { Socket } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../errors";
import type { Route } from "./control/http";
import { lifecycleRoutes } from "./control/sandboxes/lifecycle-routes";
import { SandboxManager } from "./control/sandboxes/manager";
import { queryRoutes } from "./control/sandboxes/query-routes";
import { RELAY_HIGH_WATER_MARK } from "./control/proxy";
import { createServiceHandler } from "./control/server";
import { createTemplateRegistry, templateRoutes } from "./control/templates";
import {
  API_KEY_FILE,
  TOKEN_SECRET_FILE,
  loadOrCreateSecret,
  newApiKey,
  newTokenSecret,
} from "./control/tokens";
import { secretRoutes } from "./control/secrets/routes";
import { SecretStore } from "./control/secrets/store";
import { resolveVolumeMounts } from "./control/volumes/mounts";
import { volumeContentRoutes, volumeRoutes } from "./control/volumes/routes";
import { VolumeStore } from "./control/volumes/store";
import { assertHostSupported } from "./preflight";
import { createRuntime } from "./runtime";

/** Options of {@link startLocalService}. */
export interface LocalServiceOptions {
  /**
   * The TCP port; 0 picks a free one (read it back from `apiUrl`).
   * @default 0
   */
  port?: number;
  /**
   * The interface to listen on.
   * @default "127.0.0.1"
   */
  host?: string;
  /** Directory holding the state, layers and sandboxes; created when missing. */
  dataDir: string;
  /**
   * The API key clients must send in `X-API-Key`.
   * @default a key `e2b_` + 40 hex generated on first start and kept in `<dataDir>/api-key` (mode 0600)
   */
  apiKey?: string | undefined;
  /**
   * Receives one line per notable event; never carries secrets in clear.
   * @default lines are dropped
   */
  log?: ((line: string) => void) | undefined;
  /**
   * Directory holding the agent bundle `agent.js`.
   * @default the `dist/agent` built by `npm run build`
   */
  agentBundleDir?: string | undefined;
}

/** A started local service. */
export interface LocalService {
  /** Base URL of the control API, `http://<host>:<port>`; use as `E2B_API_URL`. */
  apiUrl: string;
  /** Base URL of the sandbox interface (the same as `apiUrl`); use as `E2B_SANDBOX_URL`. */
  sandboxUrl: string;
  /** The API key; use as `E2B_API_KEY`. */
  apiKey: string;
  /** Stops the sandboxes (they come back paused on the next start), flushes state and stops listening. */
  close(): Promise<void>;
}

/** The default data dir: `$XDG_DATA_HOME/sandbox-iac` or `~/.local/share/sandbox-iac`. */
export function defaultDataDir(): string {
  const xdg = process.env.XDG_DATA_HOME;
  return path.join(
    xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".local", "share"),
    "sandbox-iac",
  );
}

/**
 * Starts the local sandbox service. Fails with `unsupported` when the host
 * is not Linux, not root, or has no `bwrap`.
 */
export async function startLocalService(opts: LocalServiceOptions): Promise<LocalService> {
  assertHostSupported();
  const log = opts.log ?? (() => undefined);
  const host = opts.host ?? "127.0.0.1";
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SandboxIacError(
      "invalid_argument",
      `port must be an integer from 0 to 65535, got ${String(port)}`,
      {
        operation: "local.start",
        field: "port",
      },
    );
  }
  const dataDir = path.resolve(opts.dataDir);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const apiKey = opts.apiKey ?? (await loadOrCreateSecret(dataDir, API_KEY_FILE, newApiKey));
  const tokenSecret = await loadOrCreateSecret(dataDir, TOKEN_SECRET_FILE, newTokenSecret);

  const runtime = await createRuntime({
    dataDir,
    log,
    ...(opts.agentBundleDir ? { agentBundleDir: opts.agentBundleDir } : {}),
  });
  log(runtime.isolation);
  let manager: SandboxManager;
  let server: http.Server;
  let opened: VolumeStore | undefined;
  try {
    const registry = await createTemplateRegistry({ dataDir, runtime, log });
    const volumes = await VolumeStore.open(dataDir, tokenSecret, log);
    opened = volumes;
    const secrets = await SecretStore.open(dataDir);
    manager = await SandboxManager.open({
      dataDir,
      runtime,
      templates: registry,
      tokenSecret,
      log,
    });
    let publicUrl = "";
    const routes: Route[] = [
      { method: "GET", pattern: "/health", auth: "none", handler: async () => healthResponse() },
      ...lifecycleRoutes(manager, (raw) => resolveVolumeMounts(volumes, raw)),
      ...volumeRoutes(volumes),
      ...volumeContentRoutes(volumes),
      ...secretRoutes(secrets),
      ...queryRoutes(manager),
      ...templateRoutes({ registry, runtime, sandboxes: manager, publicUrl: () => publicUrl, log }),
    ];
    server = http.createServer(
      { highWaterMark: RELAY_HIGH_WATER_MARK },
      createServiceHandler({ manager, routes, apiKey, log }),
    );
    // Streams (process output, watches) may stay open for hours.
    server.requestTimeout = 0;
    server.timeout = 0;
    server.keepAliveTimeout = 640_000;
    publicUrl = await listen(server, port, host);
    log(`local service listening on ${publicUrl}, data dir ${dataDir}`);
    const sockets = trackSockets(server);
    let closing: Promise<void> | undefined;
    return {
      apiUrl: publicUrl,
      sandboxUrl: publicUrl,
      apiKey,
      close: () => {
        closing ??= (async () => {
          const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
          for (const s of sockets) s.destroy();
          await manager.close();
          await volumes.close();
          await stopped;
          log("local service stopped");
        })();
        return closing;
      },
    };
  } catch (err) {
    // Volumes are mounted on the host: a start that fails leaves none behind.
    await opened?.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    throw err;
  }
}

function healthResponse(): { status: number; body: string; headers: Record<string, string> } {
  return {
    status: 200,
    body: "Health check successful",
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  };
}

function listen(server: http.Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void =>
      reject(
        new SandboxIacError(
          err.code === "EADDRINUSE" ? "already_exists" : "unavailable",
          `listening on ${host}:${port} failed (${err.code ?? err.message}): pick another --port, or stop what uses it`,
          { operation: "local.start", cause: err },
        ),
      );
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      const addr = server.address();
      const realPort = typeof addr === "object" && addr ? addr.port : port;
      const shownHost = host.includes(":") ? `[${host}]` : host;
      resolve(`http://${shownHost}:${realPort}`);
    });
  });
}

function trackSockets(server: http.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    // Stream envelopes are small; Nagle would hold them back.
    s.setNoDelay(true);
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  return sockets;
}
