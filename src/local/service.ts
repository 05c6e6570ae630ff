/**
 * {@link startLocalService}: the embedded E2B-compatible sandbox service,
 * serving the control API and the sandbox interface on one port. Its options
 * and the started service's handle are in service-options.ts; listening on the
 * port and keeping its sockets, in service-listen.ts.
 *
 * @module
 */
import * as http from "node:http";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import { invalidArgument, registerSecret, SandboxIacError } from "../errors";
import type { Route } from "./control/http";
import { lifecycleRoutes } from "./control/sandboxes/routes-lifecycle";
import { SandboxManager } from "./control/sandboxes/manager";
import { queryRoutes } from "./control/sandboxes/routes-query";
import { RELAY_HIGH_WATER_MARK } from "./control/agent-pool";
import { createServiceHandler } from "./server";
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
import { apiUrlOf, resolveAddressing, tlsServerOptions } from "./addressing";
import { lockDataDir, secureDataDir } from "./data-dir";
import { assertHostSupported } from "./preflight";
import { createRuntime } from "./runtime";
import type { SandboxRuntime } from "./runtime/types";
import { listen, trackSockets } from "./service-listen";
import type { LocalService, LocalServiceOptions } from "./service-options";

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
  assertLimit("maxSandboxes", opts.maxSandboxes);
  assertLimit("maxSandboxesPerKey", opts.maxSandboxesPerKey);
  // Checked before anything starts; the port a 0 picks is known only after listening.
  const serverTls = opts.tls ? tlsServerOptions(opts.tls) : undefined;
  resolveAddressing(opts.tls, opts.domain, port);
  assertLimit("maxStepCacheBytes", opts.maxStepCacheBytes);
  assertLimit("maxStepCacheEntries", opts.maxStepCacheEntries);
  const dataDir = path.resolve(opts.dataDir);
  secureDataDir(dataDir, log);
  // Before anything in the dir changes: a second service would mark the first one's sandboxes paused.
  const lock = lockDataDir(dataDir);
  let runtime: SandboxRuntime;
  let apiKey: string;
  let tokenSecret: string;
  let secrets: SecretStore;
  // Set once the manager exists; the edge may log for a sandbox only after it does.
  let sandboxLog: (sandboxID: string, line: string) => void = () => undefined;
  try {
    apiKey = opts.apiKey ?? (await loadOrCreateSecret(dataDir, API_KEY_FILE, newApiKey));
    tokenSecret = await loadOrCreateSecret(dataDir, TOKEN_SECRET_FILE, newTokenSecret);
    // Secrets of this service, redacted by value wherever they might be echoed.
    registerSecret(apiKey);
    registerSecret(tokenSecret);
    // Before the runtime: its egress edge fills `${e2b.secrets.NAME}` from it.
    const store = await SecretStore.open(dataDir);
    secrets = store;
    runtime = await createRuntime({
      dataDir,
      log,
      maxSandboxes: opts.maxSandboxes,
      dnsResolvers: opts.dnsResolvers,
      edge: {
        secret: (name) => store.valueByName(name),
        sandboxLog: (sandboxID, line) => sandboxLog(sandboxID, line),
        upstreamCa: opts.edgeUpstreamCa,
      },
      ...(opts.agentBundleDir ? { agentBundleDir: opts.agentBundleDir } : {}),
    });
  } catch (err) {
    lock.release();
    throw err;
  }
  log(runtime.isolation);
  let manager: SandboxManager;
  let server: http.Server;
  let opened: VolumeStore | undefined;
  try {
    const registry = await createTemplateRegistry({
      dataDir,
      runtime,
      log,
      insecureRegistries: opts.insecureRegistries,
      maxStepCacheBytes: opts.maxStepCacheBytes,
      maxStepCacheEntries: opts.maxStepCacheEntries,
    });
    const volumes = await VolumeStore.open(dataDir, tokenSecret, log, (source) =>
      runtime.detachVolume(source),
    );
    opened = volumes;
    // Known once the server listens (a port 0 is picked then); nothing is answered before.
    let servedDomain = "";
    manager = await SandboxManager.open({
      dataDir,
      runtime,
      templates: registry,
      tokenSecret,
      log,
      maxSandboxesPerKey: opts.maxSandboxesPerKey,
      domain: () => servedDomain || undefined,
    });
    const sandboxes = manager;
    sandboxLog = (sandboxID, line) => {
      log(`sandbox ${sandboxID}: ${line}`);
      sandboxes.noteSandboxLog(sandboxID, line);
    };
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
    const handler = createServiceHandler({
      manager,
      routes,
      apiKey,
      log,
      domain: () => servedDomain,
    });
    server = serverTls
      ? https.createServer({ ...serverTls, highWaterMark: RELAY_HIGH_WATER_MARK }, handler)
      : http.createServer({ highWaterMark: RELAY_HIGH_WATER_MARK }, handler);
    // Streams (process output, watches) may stay open for hours.
    server.requestTimeout = 0;
    server.timeout = 0;
    server.keepAliveTimeout = 640_000;
    const listening = await listen(server, port, host);
    const addressing = resolveAddressing(opts.tls, opts.domain, listening.port);
    servedDomain = addressing.domain;
    // Links the service hands out (template file uploads) must reach it the way clients do.
    publicUrl = opts.tls ? apiUrlOf(addressing) : listening.url;
    log(
      `local service listening on ${listening.url.replace(/^http:/, `${addressing.scheme}:`)}` +
        ` (E2B_DOMAIN ${addressing.domain}), data dir ${dataDir}`,
    );
    const sockets = trackSockets(server);
    let closing: Promise<void> | undefined;
    return {
      apiUrl: publicUrl,
      sandboxUrl: publicUrl,
      apiKey,
      domain: addressing.domain,
      tls: opts.tls !== undefined,
      close: () => {
        closing ??= (async () => {
          const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
          for (const s of sockets) s.destroy();
          try {
            await manager.close();
            await volumes.close();
            await stopped;
          } finally {
            lock.release();
          }
          log("local service stopped");
        })();
        return closing;
      },
    };
  } catch (err) {
    // Volumes are mounted on the host: a start that fails leaves none behind.
    await opened?.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    lock.release();
    throw err;
  }
}

function assertLimit(field: string, value: number | undefined): void {
  if (value === undefined || (Number.isInteger(value) && value >= 1)) return;
  throw invalidArgument("local.start", field, value, "an integer >= 1");
}

function healthResponse(): { status: number; body: string; headers: Record<string, string> } {
  return {
    status: 200,
    body: "Health check successful",
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  };
}
