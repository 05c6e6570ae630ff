/**
 * A connection answered before its request's body was read to the end stays
 * usable: the service reads and discards the rest (src/wire/early-answer.ts),
 * so the next request a keep-alive pool or a proxy in front sends on the same
 * connection is answered, not left waiting forever behind the unread body.
 * Spoken as raw HTTP/1.1 on one socket, as such a client speaks it.
 */
import * as net from "node:net";
import { createSandbox, call, runThroughProxy } from "./support";
import { useService, type TestService } from "../support/service";
import { eventually } from "../support/eventually";

let svc: TestService;
useService((s) => (svc = s));

const MiB = 1024 * 1024;

/** One client socket; `text()` is everything it has received so far, as latin1. */
async function connect(url: URL): Promise<{ socket: net.Socket; text(): string }> {
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const received: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  return { socket, text: () => Buffer.concat(received).toString("latin1") };
}

/** Writes `data` and resolves once the kernel took it. */
function write(socket: net.Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    socket.write(data, (err) => (err ? reject(err) : resolve())),
  );
}

describe("an answer given before the request's body ended", () => {
  it("leaves the connection answering its next request when a sandbox is killed mid-upload", async () => {
    // GIVEN an upload to a sandbox under way: the client has sent 1 MiB, and the
    // service has passed some of it on (the agent's temporary file has bytes)
    const { sandboxID } = await createSandbox(svc, { timeout: 120 });
    const url = new URL(svc.sandboxUrl);
    const client = await connect(url);
    const total = 4 * MiB;
    await write(
      client.socket,
      [
        "POST /files?path=/home/user/big.bin&username=user HTTP/1.1",
        `Host: ${url.host}`,
        "Content-Type: application/octet-stream",
        `Content-Length: ${total}`,
        `E2b-Sandbox-Id: ${sandboxID}`,
        "E2b-Sandbox-Port: 49983",
        "",
        "",
      ].join("\r\n"),
    );
    await write(client.socket, Buffer.alloc(MiB, 1));
    await eventually(async () => {
      const run = await runThroughProxy(
        svc,
        sandboxID,
        "cat /home/user/.sandbox-iac-upload-* 2>/dev/null | wc -c",
      );
      return Number(run.stdout.trim()) > 0;
    });
    // WHEN the sandbox is killed, the 502 comes, and the client sends the rest and then its next request
    expect((await call(svc, "DELETE", `/sandboxes/${sandboxID}`)).status).toBe(204);
    await eventually(() => client.text().startsWith("HTTP/1.1 502 "));
    await write(client.socket, Buffer.alloc(total - MiB, 2));
    await write(client.socket, `GET /health HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    // THEN that next request is answered on the same connection
    await eventually(() => client.text().includes("HTTP/1.1 200 OK"), {
      timeoutMs: 30_000,
    });
    client.socket.destroy();
  });
});
