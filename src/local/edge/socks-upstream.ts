/**
 * The edge's upstream connections through a sandbox's `network.egressProxy`:
 * a SOCKS5 CONNECT (RFC 1928) with the RFC 1929 username and password when
 * given, spoken by the maintained `socks` library. The destination is the
 * name the flow asked for when the flow was allowed by that name (ATYP
 * domain: the proxy resolves it, E2B's "remote DNS for domain-matched
 * flows"), else the flow's original address. Failures are described by the
 * proxy's address, the username and the SOCKS step that failed: never the
 * password (the library's error objects carry their options, so only their
 * message is read).
 *
 * @module
 */
import * as http from "node:http";
import * as https from "node:https";
import type * as net from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import * as tls from "node:tls";
import { SocksClient } from "socks";
import { checkEgressProxy, type EgressProxyConfig } from "../../wire/egress-proxy";

/** How long reaching the proxy and its CONNECT answer may take. */
const PROXY_TIMEOUT_MS = 15_000;

/** A failed tunnel, described without the password. */
export class ProxyFailure extends Error {}

/** `destination` (a name or an address) on `port`, reached through `proxy`. */
export async function connectThroughProxy(
  proxy: EgressProxyConfig,
  destination: string,
  port: number,
): Promise<net.Socket> {
  const checked = checkEgressProxy(proxy);
  // Checked on write: a stored proxy is always valid.
  if ("problem" in checked) throw new ProxyFailure(`egress proxy: ${checked.problem}`);
  const { host, port: proxyPort, username, password } = checked.proxy;
  try {
    const { socket } = await SocksClient.createConnection({
      proxy: {
        host,
        port: proxyPort,
        type: 5,
        ...(username ? { userId: username, password: password ?? "" } : {}),
      },
      command: "connect",
      destination: { host: destination, port },
      timeout: PROXY_TIMEOUT_MS,
    });
    socket.setNoDelay(true);
    return socket;
  } catch (err) {
    const reason = err instanceof Error ? err.message : "unknown failure";
    const who = username
      ? ` with the username ${JSON.stringify(username)}`
      : " without credentials";
    const hint = /authentication/i.test(reason)
      ? ": the proxy refused the credentials (RFC 1929); fix egressProxy.username / password (PUT /sandboxes/{id}/network)"
      : "";
    throw new ProxyFailure(
      `egress proxy ${proxy.address}${who} could not open ${destination}:${port}: ${reason}${hint}`,
    );
  }
}

/**
 * Upstream pools whose connections go through `proxy` (`onFailure` hears why
 * one could not); TLS inside the tunnel verifies with `trust`.
 */
export function proxiedAgents(
  proxy: EgressProxyConfig,
  onFailure: (err: ProxyFailure) => void,
  trust: tls.SecureContext,
): { http: http.Agent; https: https.Agent } {
  type Done = ((err: Error | null, stream: Duplex) => void) | undefined;
  const tunnel = (
    options: { host?: string | null | undefined; port?: number | string | null | undefined },
    done: Done,
    wrap: (socket: net.Socket) => Duplex,
  ) => {
    connectThroughProxy(proxy, options.host ?? "", Number(options.port)).then(
      (socket) => done?.(null, wrap(socket)),
      (err: ProxyFailure) => {
        onFailure(err);
        // Node's callback takes a stream even on failure; one already destroyed.
        done?.(err, new PassThrough().destroy());
      },
    );
  };
  class PlainAgent extends http.Agent {
    override createConnection(options: http.ClientRequestArgs, done: Done): undefined {
      tunnel(options, done, (s) => s);
      return undefined;
    }
  }
  class SecureAgent extends https.Agent {
    override createConnection(options: https.RequestOptions, done: Done): undefined {
      // TLS to the destination runs inside the tunnel, verified as without a proxy.
      tunnel(options, done, (socket) =>
        tls.connect({ ...(options as tls.ConnectionOptions), socket }),
      );
      return undefined;
    }
  }
  const pool = { keepAlive: true, maxSockets: 64, noDelay: true };
  return { http: new PlainAgent(pool), https: new SecureAgent({ ...pool, secureContext: trust }) };
}
