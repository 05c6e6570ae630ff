/**
 * The name a sandbox's new TCP flow asks for, read from its first bytes: the
 * TLS SNI of a ClientHello, or the `Host` of a plain HTTP/1 request. Both are
 * parsed by what Node already maintains for hostile input, fed the bytes
 * through a stream that answers nothing: OpenSSL (a server-side TLS socket
 * whose SNI callback reports the name and stops the handshake) and llhttp (an
 * HTTP server that never answers). Every read is bounded in bytes and time,
 * and the bytes read are kept to be sent on unchanged.
 *
 * @module
 */
import * as http from "node:http";
import type * as net from "node:net";
import { Duplex } from "node:stream";
import * as tls from "node:tls";

/** What was read: the name asked for (when one was found) and every byte read. */
export interface PeekResult {
  /** The SNI or Host (port removed), as sent; undefined when none could be read. */
  name: string | undefined;
  /** The bytes read, in order, to send upstream first. */
  head: Buffer[];
}

/** Bounds of one peek. */
export interface PeekLimits {
  /** Most bytes read before giving up (a ClientHello or request head is far smaller). */
  maxBytes: number;
  /** Longest wait for the whole ClientHello or request head (slowloris bound). */
  timeoutMs: number;
}

/** A parser fed the flow's bytes; reports the name once (undefined: none). */
type Feed = (chunk: Buffer) => void;

/** One shared context: a peek never gets as far as choosing a certificate. */
let peekContext: tls.SecureContext | undefined;

/** TLS: OpenSSL parses the ClientHello, across records, and hands the SNI to the callback. */
function tlsFeed(report: (name: string | undefined) => void): { feed: Feed; close: () => void } {
  const input = new Duplex({ read() {}, write: (_chunk, _enc, done) => done() });
  peekContext ??= tls.createSecureContext({ minVersion: "TLSv1" });
  const socket = new tls.TLSSocket(input, {
    isServer: true,
    secureContext: peekContext,
    SNICallback: (name, done) => {
      report(name);
      done(new Error("peek only"));
    },
  });
  // Without an SNI the handshake fails (no certificate): no name.
  socket.on("error", () => report(undefined));
  socket.on("close", () => report(undefined));
  return {
    feed: (chunk) => input.push(chunk),
    close: () => {
      socket.destroy();
      input.destroy();
    },
  };
}

/** HTTP: llhttp parses the request head (Node's limits: 16 KiB of headers). */
function httpFeed(report: (name: string | undefined) => void): { feed: Feed; close: () => void } {
  const input = new Duplex({ read() {}, write: (_chunk, _enc, done) => done() });
  const server = http.createServer();
  const onHead = (req: http.IncomingMessage) => {
    // Two Host headers (a smuggling trick) name nothing.
    const hosts = req.rawHeaders.filter((_v, i) => i % 2 === 0 && /^host$/i.test(_v));
    const host = hosts.length === 1 ? req.headers.host : undefined;
    report(host?.replace(/:\d{1,5}$/, ""));
  };
  server.on("request", onHead);
  server.on("upgrade", onHead);
  server.on("connect", () => report(undefined));
  server.on("clientError", () => report(undefined));
  server.emit("connection", input);
  return {
    feed: (chunk) => input.push(chunk),
    close: () => {
      input.destroy();
      server.close();
    },
  };
}

/**
 * Reads `socket` until the name it asks for is known, the limits are reached,
 * or it closes; leaves it paused with its bytes in `head`.
 */
export function peekRequestedName(socket: net.Socket, limits: PeekLimits): Promise<PeekResult> {
  return new Promise((resolve) => {
    const head: Buffer[] = [];
    let bytes = 0;
    let parser: { feed: Feed; close: () => void } | undefined;
    let done = false;
    const finish = (name: string | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", none);
      socket.off("close", none);
      socket.pause();
      // The parsers may report from within feed(): close them after this turn.
      const p = parser;
      setImmediate(() => p?.close());
      resolve({ name, head });
    };
    const none = () => finish(undefined);
    const onData = (chunk: Buffer) => {
      head.push(chunk);
      bytes += chunk.length;
      if (bytes > limits.maxBytes) return finish(undefined);
      if (!parser) {
        const first = chunk[0];
        // 0x16: a TLS handshake record; an upper-case letter: an HTTP method.
        if (first === 0x16) parser = tlsFeed(finish);
        else if (first !== undefined && first >= 0x41 && first <= 0x5a) parser = httpFeed(finish);
        else return finish(undefined);
      }
      parser.feed(chunk);
    };
    const timer = setTimeout(none, limits.timeoutMs);
    socket.on("data", onData);
    socket.once("end", none);
    socket.once("close", none);
  });
}
