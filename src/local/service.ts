/**
 * {@link startLocalService}: the embedded E2B-compatible sandbox service,
 * serving the control API and the sandbox interface on one port.
 *
 * @module
 */
import * as http from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { invalidArgument, registerSecret, SandboxIacError } from "../errors";
import type { Route } from "./control/http";
import { lifecycleRoutes } from "./control/sandboxes/routes-lifecycle";
import { SandboxManager } from "./control/sandboxes/manager";
import { queryRoutes } from "./control/sandboxes/routes-query";
import { RELAY_HIGH_WATER_MARK } from "./proxy/agent-pool";
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
import { apiUrlOf, resolveAddressing, tlsServerOptions, type TlsMaterial } from "./addressing";
import { lockDataDir, secureDataDir } from "./data-dir";
import { assertHostSupported } from "./preflight";
import { createRuntime } from "./runtime";
import type { SandboxRuntime } from "./runtime/types";

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
  /**
   * Most sandboxes running at once on the service: the API's sandboxes,
   * warm-pool members and template builds together. Past it a start answers
   * 429. It also divides the host's PTYs among sandboxes.
   * @default as many sandboxes of 512 MiB as fit in the host's memory minus an eighth (at least 1 GiB)
   */
  maxSandboxes?: number | undefined;
  /**
   * Most sandboxes of the API key's team running at once; past it create,
   * resume and connect answer 429 with E2B's message ("you have reached the
   * maximum number of concurrent E2B sandboxes (N)…").
   * @default `maxSandboxes`
   */
  maxSandboxesPerKey?: number | undefined;
  /**
   * IPv4 addresses of the DNS resolvers sandboxes use and the egress edge
   * asks when it checks a domain-matched flow (tests point it at a stand-in).
   * @default the nameservers of the host's /etc/resolv.conf, loopback ones left out
   */
  dnsResolvers?: string[] | undefined;
  /**
   * Registries (`host:port`) template builds may pull images from over plain
   * HTTP (or HTTPS without verifying its certificate); loopback registries
   * (`localhost`, `127.0.0.0/8`) always may, as Docker allows.
   * @default none
   */
  insecureRegistries?: readonly string[] | undefined;
  /**
   * Serve HTTPS with this certificate and key (PEM text), as E2B's cloud does:
   * clients with only `E2B_DOMAIN` reach `https://api.<domain>` and
   * `https://<port>-<sandboxID>.<domain>`, so the certificate must cover `*.<domain>`.
   * @default plain HTTP
   */
  tls?: TlsMaterial | undefined;
  /**
   * The domain clients address the service by (`E2B_DOMAIN`): the control API
   * at `api.<domain>`, port `p` of sandbox `id` at `<p>-<id>.<domain>`, each
   * name resolving to this service. May end in `:<port>`. Sandbox answers
   * (create, connect, resume, fork, get) carry it as `domain`, as E2B's do, and
   * a `<port>-<sandboxID>.<other>` Host under any other name is answered 421.
   * @default with `tls`, the certificate's one wildcard name (`*.example.com`
   * gives `example.com`) plus `:<port>` unless the port is 443; else `localhost:<port>`
   */
  domain?: string | undefined;
  /**
   * Most bytes the layers made by cached template build steps may take
   * together. Past it the least recently used cache entries are dropped; a
   * dropped entry's layer is deleted by the next garbage collection (a
   * template deleted, the next start) unless a template still uses it.
   * @default 10 GiB (10737418240)
   */
  maxStepCacheBytes?: number | undefined;
  /**
   * Most entries (one per cached build step) the step cache keeps; past it
   * the least recently used go, as with {@link LocalServiceOptions.maxStepCacheBytes}.
   * @default 2000
   */
  maxStepCacheEntries?: number | undefined;
  /**
   * PEM certificates of CAs the egress edge trusts, besides the host's store
   * (`/etc/ssl/certs/ca-certificates.crt`), when it connects on to a domain
   * that has `network.rules` (tests give the stand-in server's CA here).
   * @default the host's store only
   */
  edgeUpstreamCa?: readonly string[] | undefined;
}

/** A started local service. */
export interface LocalService {
  /**
   * Base URL of the control API: `http://<host>:<port>`, or with TLS
   * `https://api.<domain>`; use as `E2B_API_URL`.
   */
  apiUrl: string;
  /** Base URL of the sandbox interface (the same as `apiUrl`); use as `E2B_SANDBOX_URL`. */
  sandboxUrl: string;
  /** The API key; use as `E2B_API_KEY`. */
  apiKey: string;
  /** The domain clients address the service by; use as `E2B_DOMAIN` (see {@link LocalServiceOptions.domain}). */
  domain: string;
  /** True when the port serves HTTPS: `E2B_DOMAIN` and `E2B_API_KEY` are then all a client needs. */
  tls: boolean;
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

function listen(
  server: http.Server,
  port: number,
  host: string,
): Promise<{ url: string; port: number }> {
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
      resolve({ url: `http://${shownHost}:${realPort}`, port: realPort });
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
