/**
 * Starts the provider the way Terraform does (magic cookie, a client
 * certificate in PLUGIN_CLIENT_CERT), reads the go-plugin handshake line and
 * connects over mutual TLS on the unix socket, with Connect's gRPC client.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import * as path from "node:path";
import * as tls from "node:tls";
import { type Client, createClient } from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";
import { GRPCController } from "../../src/gen/terraform/grpc_controller_pb";
import { Provider } from "../../src/gen/terraform/tfplugin6_pb";
import { createPluginCertificate } from "../../src/terraform/plugin/certificate";
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../src/terraform/plugin/handshake";

const REPO = path.resolve(__dirname, "..", "..");
/** The built provider entry (the launcher runs the same file). */
export const PROVIDER_ENTRY = path.join(REPO, "dist", "terraform", "main.js");

/** A provider process and gRPC clients connected to it. */
export interface ProviderProcess {
  child: ChildProcess;
  /** The handshake line's fields. */
  handshake: string[];
  /** The server certificate the TLS connection presented. */
  peerCertificate: X509Certificate;
  provider: Client<typeof Provider>;
  controller: Client<typeof GRPCController>;
  /** Everything the provider wrote to stderr. */
  stderr(): string;
  /** Shuts the provider down (GRPCController.Shutdown) and waits for it to exit. */
  shutdown(): Promise<number | null>;
}

/** Spawns the provider with `cwd` as Terraform's working directory. */
export async function startProvider(cwd: string): Promise<ProviderProcess> {
  const clientCert = await createPluginCertificate();
  const child = spawn(process.execPath, [PROVIDER_ENTRY], {
    cwd,
    env: {
      ...process.env,
      [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE,
      PLUGIN_CLIENT_CERT: clientCert.certPem,
      PLUGIN_PROTOCOL_VERSIONS: "6",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    void exited.then((code) =>
      reject(new Error(`provider exited (${code}) before the handshake: ${stderr}`)),
    );
  });
  const handshake = line.split("|");
  const socketPath = handshake[3];
  const serverCertDer = Buffer.from(handshake[5], "base64");
  const serverCert = new X509Certificate(serverCertDer);
  let peerCertificate: X509Certificate | undefined;
  const sessions = new Http2SessionManager("https://localhost", undefined, {
    createConnection: () => {
      const socket = tls.connect({
        path: socketPath,
        servername: "localhost",
        ca: serverCert.toString(),
        cert: clientCert.certPem,
        key: clientCert.keyPem,
        ALPNProtocols: ["h2"],
      });
      socket.once("secureConnect", () => {
        peerCertificate = new X509Certificate(socket.getPeerCertificate().raw);
      });
      return socket;
    },
  });
  const transport = createGrpcTransport({ baseUrl: "https://localhost", sessionManager: sessions });
  const provider = createClient(Provider, transport);
  const controller = createClient(GRPCController, transport);
  // The first call opens the connection (and checks the server certificate).
  await provider.getMetadata({});
  return {
    child,
    handshake,
    get peerCertificate() {
      return peerCertificate!;
    },
    provider,
    controller,
    stderr: () => stderr,
    async shutdown() {
      await controller.shutdown({}).catch(() => undefined);
      sessions.abort();
      return exited;
    },
  };
}
