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

/** One part of a multipart upload; without `filename` it is a plain text field. */
export interface FormPart {
  data: string;
  filename?: string | undefined;
  /** @default "file" */
  name?: string | undefined;
}

/** A `multipart/form-data` body as the SDKs send it (built by the platform's FormData). */
async function multipartBody(parts: FormPart[]): Promise<{ body: Buffer; contentType: string }> {
  const fd = new FormData();
  for (const p of parts) {
    if (p.filename === undefined) fd.append(p.name ?? "file", p.data);
    else fd.append(p.name ?? "file", new Blob([p.data]), p.filename);
  }
  const r = new Response(fd);
  return { body: Buffer.from(await r.arrayBuffer()), contentType: r.headers.get("content-type")! };
}

/** POSTs `parts` as multipart to `route` (`/files...`) on the agent socket. */
export async function uploadForm(
  socketPath: string,
  route: string,
  parts: FormPart[],
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const mp = await multipartBody(parts);
  return rawRequest(
    socketPath,
    "POST",
    route,
    { "content-type": mp.contentType, ...headers },
    mp.body,
  );
}
