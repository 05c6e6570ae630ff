/**
 * Serves a Terraform provider the way go-plugin expects: gRPC (Connect's gRPC
 * protocol over Node's HTTP/2) on a unix socket, TLS with a fresh certificate,
 * the client certificate Terraform passed in `PLUGIN_CLIENT_CERT` required
 * (AutoMTLS), and go-plugin's own services beside the provider:
 * `GRPCController.Shutdown`, `GRPCStdio.StreamStdio` and `GRPCBroker.StartStream`.
 *
 * @module
 */
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as os from "node:os";
import * as path from "node:path";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { GRPCBroker } from "../../gen/terraform/grpc_broker_pb";
import { GRPCController } from "../../gen/terraform/grpc_controller_pb";
import { GRPCStdio } from "../../gen/terraform/grpc_stdio_pb";
import { Provider } from "../../gen/terraform/tfplugin6_pb";
import { createPluginCertificate } from "./certificate";
import { handshakeLine } from "./handshake";
import { InFlight, trackedProvider } from "./in-flight";

/**
 * How long a closing server waits for the provider calls still running (a
 * stopped call killing what it started) before it reports itself closed.
 */
const IN_FLIGHT_GRACE_MS = 30_000;

/** Options of {@link servePlugin}. */
export interface ServePluginOptions {
  /** The tfplugin6 Provider service. Methods left out answer `unimplemented`. */
  provider: Partial<ServiceImpl<typeof Provider>>;
  /** The client certificate (PEM) that connections must present: `PLUGIN_CLIENT_CERT`. */
  clientCertPem: string;
  /**
   * Directory for the unix socket.
   * @default `PLUGIN_UNIX_SOCKET_DIR` when the caller has it, else a new temporary directory
   */
  socketDir?: string | undefined;
}

/** A running plugin server. */
export interface PluginServer {
  /** The line to print on stdout for the handshake. */
  readonly handshake: string;
  /** The unix socket path. */
  readonly socketPath: string;
  /** Settles when the server has stopped (after `GRPCController.Shutdown` or {@link close}). */
  readonly closed: Promise<void>;
  /**
   * Stops accepting calls, ends open streams, lets the provider calls still
   * running end (at most 30 s) and removes the socket.
   */
  close(): Promise<void>;
}

/** Starts serving; resolves once the socket is listening. */
export async function servePlugin(options: ServePluginOptions): Promise<PluginServer> {
  const cert = await createPluginCertificate();
  const ownDir = options.socketDir === undefined;
  const dir = options.socketDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "sandboxiac-plugin-"));
  const socketPath = path.join(dir, `plugin-${process.pid}.sock`);
  fs.rmSync(socketPath, { force: true });

  const stopping = new AbortController();
  const inFlight = new InFlight();
  const provider = trackedProvider(options.provider, inFlight);
  const routes = (router: ConnectRouter): void => {
    router.service(Provider, provider);
    router.service(GRPCController, {
      shutdown() {
        // Answer first, then stop: Terraform waits for the reply.
        setImmediate(() => void close());
        return {};
      },
    });
    router.service(GRPCStdio, {
      // Logs go to stderr, which go-plugin reads directly; the stream stays
      // open (and empty) until shutdown, as go-plugin expects one.
      async *streamStdio(_req, ctx) {
        await untilAborted(AbortSignal.any([ctx.signal, stopping.signal]));
        yield* [];
      },
    });
    router.service(GRPCBroker, {
      // No sub-plugins are brokered; drain the stream until the client ends it.
      async *startStream(requests) {
        for await (const _ of requests) void _;
        yield* [];
      },
    });
  };

  const server = http2.createSecureServer(
    {
      key: cert.keyPem,
      cert: cert.certPem,
      ca: options.clientCertPem,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: "TLSv1.2",
      ALPNProtocols: ["h2"],
    },
    connectNodeAdapter({ routes, grpc: true, connect: false, grpcWeb: false }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      stopping.abort();
      server.close(() => resolve());
      for (const session of sessions) session.close();
      // Sessions that do not end by themselves (a stuck client) are cut.
      setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, 2000).unref();
    })
      .then(() => inFlight.settled(IN_FLIGHT_GRACE_MS))
      .then(() => {
        fs.rmSync(socketPath, { force: true });
        if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
        resolveClosed();
      });
    return closing;
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return { handshake: handshakeLine(socketPath, cert.derBase64), socketPath, closed, close };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}
