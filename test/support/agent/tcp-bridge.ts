/**
 * Test helper: a loopback TCP port forwarding byte for byte to the agent's
 * Unix socket, so HTTP clients that cannot dial a socket (the e2b SDK) reach it.
 *
 * @module
 */
import * as net from "node:net";

/** A running bridge. */
export interface TcpBridge {
  url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (a free port) and forwards every connection to `socketPath`. */
export async function bridgeToSocket(socketPath: string): Promise<TcpBridge> {
  const conns = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    conns.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      conns.delete(client);
      conns.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of conns) c.destroy();
        server.close(() => resolve());
      }),
  };
}
