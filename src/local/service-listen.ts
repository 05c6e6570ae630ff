/**
 * The port's listening: binding the server (a failure said as `already_exists`
 * or `unavailable` with the fix) and keeping its sockets, so `close()` can cut
 * the streams that would otherwise hold it open for hours. Its own file because
 * it is plain socket handling, apart from what service.ts opens and serves.
 *
 * @module
 */
import type * as http from "node:http";
import type { Socket } from "node:net";
import { SandboxIacError } from "../errors";

/**
 * Listens on `host:port` and answers the URL and the port (the one a 0 picked);
 * fails with `already_exists` when the port is taken, else `unavailable`.
 */
export function listen(
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

/**
 * The server's open sockets, each with Nagle off; a socket leaves the set when
 * it closes, so `close()` destroys only live ones.
 */
export function trackSockets(server: http.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    // Stream envelopes are small; Nagle would hold them back.
    s.setNoDelay(true);
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  return sockets;
}
