/**
 * Where the edge opens a sandbox's request to a domain that has
 * `network.rules`: TLS is terminated with a certificate of the service's CA
 * for the name the client asked for (ALPN offers only `http/1.1`: a client
 * that insists on HTTP/2 fails its handshake), Node's HTTP server parses the
 * request, each rule's `transform.headers` is applied (a header of the same
 * name is replaced; `${e2b.secrets.NAME}` is filled with the secret's current
 * value), and the request goes on to the flow's original destination over
 * the sandbox's kept-alive upstream connections (TLS sessions resumed),
 * whose certificate must be valid for that name (the host's trust store,
 * plus the CAs the service was given, parsed once). The answer comes
 * back as it is. A plain HTTP request to such a domain is treated alike,
 * without TLS on either side.
 *
 * When a rule names a secret that does not exist, the request is answered
 * by the edge with a 502 saying which rule and which name, and the
 * sandbox's log gets a line; nothing is sent upstream. Secret values never
 * reach a log line or an answer: only names do.
 *
 * @module
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type * as net from "node:net";
import { Duplex } from "node:stream";
import * as tls from "node:tls";
import { fillSecrets, type NetworkRule } from "../../wire/egress-transforms";
import type { EdgeCa } from "./edge-ca";
import type { EgressProxyConfig } from "../../wire/egress-proxy";
import { proxiedAgents, type ProxyFailure } from "./socks-upstream";

/** The host's bundle: what "the host's trust store" means for upstream connections. */
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/** Request and response headers that belong to one connection, not to the request. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
]);
/** Marks answers the edge itself gives (rather than the destination). */
const EDGE_HEADER = "x-sandbox-iac-edge";

/** One terminated flow: what it asked for and which rules apply. */
interface TerminatedFlow {
  /** The requested name (SNI or Host), lower-cased. */
  name: string;
  /** The flow's original destination. */
  dst: string;
  /** The host upstream requests name: `dst`, or the name when a proxy resolves it. */
  upstreamHost: string;
  dport: number;
  /**
   * The `network.rules` key matching the name now, and its rules (in order);
   * read per request, so that `PUT /network` applies to kept-alive connections.
   */
  rulesNow(): { ruleKey: string; rules: readonly NetworkRule[] } | undefined;
  /** The sandbox, for its log. */
  sandboxID: string;
  /** Its upstream connections (kept alive between its requests, closed with its policy). */
  agents: UpstreamAgents;
}

/** Keep-alive connection pools of one sandbox. */
export interface UpstreamAgents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

/** Options of {@link createTerminator}. */
export interface TerminatorOptions {
  ca: EdgeCa;
  /** PEM CAs trusted upstream besides the host's (tests: the stand-in server's CA). */
  upstreamCa?: readonly string[] | undefined;
  /** The current value of a secret by name; undefined when there is none. */
  secret: (name: string) => string | undefined;
  /** A line for the sandbox's log (names only, never values). */
  log: (sandboxID: string, line: string) => void;
}

/** Terminates flows handed to it. */
export interface Terminator {
  /** New pools for a sandbox's upstream connections (through `proxy` when given). */
  agents(proxy?: EgressProxyConfig, onProxyFailure?: (err: ProxyFailure) => void): UpstreamAgents;
  /** Serves `socket` (paused, its first bytes in `head`) as `flow`; TLS when `tls`. */
  serve(socket: net.Socket, head: Buffer[], tlsFlow: boolean, flow: TerminatedFlow): void;
}

/** A stream replaying `head`, then `socket`'s bytes; writes go to `socket`. */
function replaying(socket: net.Socket, head: Buffer[]): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _enc, done) => {
      if (socket.destroyed) return done();
      socket.write(chunk, () => done());
    },
    final: (done) => {
      socket.end();
      done();
    },
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  for (const chunk of head) stream.push(chunk);
  socket.on("data", (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.once("end", () => stream.push(null));
  socket.once("close", () => stream.destroy());
  return stream;
}

/**
 * The trust store of upstream connections (the host's bundle, or Node's
 * roots, and the extra CAs), parsed once: given as `ca` instead, every new
 * upstream connection would parse the whole bundle again, and the agent
 * would key its pool by the bundle's text on every request.
 */
function upstreamTrust(extra: readonly string[] | undefined): tls.SecureContext {
  const host = fs.existsSync(HOST_BUNDLE)
    ? [fs.readFileSync(HOST_BUNDLE, "utf8")]
    : [...tls.rootCertificates];
  return tls.createSecureContext({ ca: [...host, ...(extra ?? [])] });
}

/** An answer given by the edge itself. */
function edgeAnswer(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `sandbox-iac egress edge: ${message}\n`;
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    [EDGE_HEADER]: "error",
  });
  res.end(body);
}

/** `raw` (name, value, name, value…) without hop-by-hop headers and those `Connection` names. */
function endToEnd(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === "connection")
      for (const n of raw[i + 1].split(",")) named.add(n.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (!HOP_BY_HOP.has(lower) && !named.has(lower)) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/**
 * The request's headers with the rules applied, or the secret name that does
 * not resolve.
 */
function transformed(
  raw: readonly string[],
  rules: readonly NetworkRule[],
  secret: (name: string) => string | undefined,
): { headers: string[] } | { unknown: string } {
  let headers = endToEnd(raw);
  for (const rule of rules) {
    for (const [name, template] of Object.entries(rule.transform?.headers ?? {})) {
      const filled = fillSecrets(template, secret);
      if ("unknown" in filled) return filled;
      const lower = name.toLowerCase();
      headers = headers.filter((_v, i, all) => all[i - (i % 2)].toLowerCase() !== lower);
      headers.push(name, filled.value);
    }
  }
  return { headers };
}

/** Creates the terminator of one edge. */
export function createTerminator(options: TerminatorOptions): Terminator {
  const trust = upstreamTrust(options.upstreamCa);
  const flows = new WeakMap<object, TerminatedFlow>();

  function forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const flow = flows.get(req.socket);
    if (!flow) return edgeAnswer(res, 500, "request on an unknown flow");
    const matched = flow.rulesNow();
    const result = transformed(req.rawHeaders, matched?.rules ?? [], options.secret);
    if ("unknown" in result) {
      const what = `network.rules["${matched?.ruleKey ?? ""}"] names the secret "${result.unknown}", which does not exist`;
      options.log(flow.sandboxID, `egress edge: a request to ${flow.name} was refused: ${what}`);
      req.resume();
      return edgeAnswer(
        res,
        502,
        `${what}: create it (Secret.create / POST /secrets) or change the sandbox's rules (PUT /sandboxes/{id}/network); nothing was sent to ${flow.name}`,
      );
    }
    const secure = req.socket instanceof tls.TLSSocket;
    const common = {
      host: flow.upstreamHost,
      port: flow.dport,
      method: req.method,
      path: req.url,
      headers: result.headers,
      setHost: false,
    };
    const upstream = secure
      ? https.request({ ...common, servername: flow.name, agent: flow.agents.https })
      : http.request({ ...common, agent: flow.agents.http });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      // The error names the destination and the failure (e.g. a certificate not valid for the name), no header.
      edgeAnswer(res, 502, `${flow.name} could not be reached: ${err.code ?? err.message}`);
    });
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  const server = http.createServer(forward);
  server.on("clientError", (_err, socket: Duplex) => socket.destroy());

  return {
    agents(proxy, onProxyFailure) {
      const pool = { keepAlive: true, maxSockets: 64, noDelay: true };
      // The agent hands its options to every connection it opens: each verifies with `trust`.
      const { http: plain, https: secure } = proxy
        ? proxiedAgents(proxy, onProxyFailure ?? (() => undefined), trust)
        : { http: new http.Agent(pool), https: new https.Agent({ ...pool, secureContext: trust }) };
      return {
        http: plain,
        https: secure,
        destroy: () => {
          plain.destroy();
          secure.destroy();
        },
      };
    },
    serve(socket, head, tlsFlow, flow) {
      // Answers go out in several writes (TLS records, head, body): Nagle would hold them back.
      socket.setNoDelay(true);
      const stream = replaying(socket, head);
      if (!tlsFlow) {
        flows.set(stream, flow);
        server.emit("connection", stream);
        return;
      }
      const clear = new tls.TLSSocket(stream, {
        isServer: true,
        secureContext: options.ca.contextFor(flow.name),
        ALPNProtocols: ["http/1.1"],
      });
      clear.on("error", () => clear.destroy());
      flows.set(clear, flow);
      server.emit("connection", clear);
    },
  };
}
