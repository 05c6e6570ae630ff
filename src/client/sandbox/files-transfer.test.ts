import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { createSandboxClient } from "./client";
import { neverTransport } from "../../../test/support/never-transports";

// The service's own behaviour is tested end to end (test/e2e/sandbox-client.test.ts).
// This checks a client property the real service cannot expose: an upload reads
// the local file only as fast as the receiver takes it.
describe("uploadFile()", () => {
  const SIZE = 64 * 1024 * 1024;
  let dir: string;
  let file: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-upload-"));
    file = path.join(dir, "big.bin");
    const fd = fs.openSync(file, "w");
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let i = 0; i < SIZE / chunk.length; i++) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reads the file only as fast as the receiver takes it", async () => {
    let pulledWhilePaused = -1;
    let pulled = 0;
    let received = 0;
    const server = http.createServer((req, res) => {
      let paused = false;
      req.on("data", (c: Buffer) => {
        received += c.length;
        if (!paused && received > 1024 * 1024) {
          paused = true;
          req.pause();
          setTimeout(() => {
            pulledWhilePaused = pulled;
            req.resume();
          }, 500);
        }
      });
      req.on("end", () => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify([{ path: "/home/user/big.bin", name: "big.bin", type: "file" }]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const counting: typeof fetch = (input, init) => {
        const body = (init?.body as ReadableStream<Uint8Array>).pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              pulled += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
        );
        return fetch(input, { ...init, body });
      };
      const client = createSandboxClient({
        sandboxID: "isbx1",
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        transport: neverTransport(),
        fetch: counting,
      });
      const written = await client.uploadFile(file, "big.bin");
      expect(written.path).toBe("/home/user/big.bin");
      expect(received).toBe(SIZE);
      // Socket and stream buffers hold a few MiB; a buffered upload would have read all 64.
      expect(pulledWhilePaused).toBeGreaterThan(0);
      expect(pulledWhilePaused).toBeLessThan(16 * 1024 * 1024);
    } finally {
      server.close();
    }
  });
});
