/**
 * What {@link startLocalService} takes and what it hands back: the options a
 * caller (the CLI, tests, embedders) sets, with their defaults, and the
 * started service's URLs, key and `close()`. Its own file because it is the
 * public contract of `sandbox-iac/local`, read apart from how the service is
 * put together in service.ts.
 *
 * @module
 */
import type { TlsMaterial } from "./addressing";

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
