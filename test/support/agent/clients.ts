/**
 * Test helper: Connect clients and a plain-HTTP caller for an agent socket.
 *
 * @module
 */
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as http from "node:http";
import { Filesystem } from "../../../src/gen/envd/filesystem/filesystem_pb";
import { Process } from "../../../src/gen/envd/process/process_pb";

/** Process and Filesystem clients speaking Connect+JSON over the socket, as the SDK does. */
export function agentClients(socketPath: string): {
  process: Client<typeof Process>;
  fs: Client<typeof Filesystem>;
} {
  const transport = createConnectTransport({
    baseUrl: "http://localhost",
    httpVersion: "1.1",
    useBinaryFormat: false,
    nodeOptions: { socketPath },
  });
  return { process: createClient(Process, transport), fs: createClient(Filesystem, transport) };
}

/** A raw HTTP answer. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Sends one HTTP/1.1 request to the agent socket and buffers the answer. */
export function rawRequest(
  socketPath: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
