import * as net from "node:net";
import * as tls from "node:tls";
import { peekRequestedName, type PeekResult } from "./requested-name";

const LIMITS = { maxBytes: 32 * 1024, timeoutMs: 1000 };

/** Sends what `client` writes to a fresh server socket and peeks it there. */
async function peekFrom(client: (port: number) => net.Socket): Promise<PeekResult> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once("connection", resolve));
  const c = client((server.address() as net.AddressInfo).port);
  c.on("error", () => undefined);
  try {
    const socket = await accepted;
    const result = await peekRequestedName(socket, LIMITS);
    socket.destroy();
    return result;
  } finally {
    c.destroy();
    server.close();
  }
}

const raw = (bytes: Buffer | string) => (port: number) => {
  const c = net.connect(port, "127.0.0.1");
  c.write(bytes);
  return c;
};

describe("peekRequestedName()", () => {
  it("reads the SNI of a real ClientHello and keeps every byte it read", async () => {
    const r = await peekFrom((port) =>
      tls.connect({ port, host: "127.0.0.1", servername: "Api.Example.test" }),
    );
    expect(r.name).toBe("Api.Example.test");
    expect(Buffer.concat(r.head)[0]).toBe(0x16);
  });

  it("reads the Host of an HTTP/1 request, without its port", async () => {
    const r = await peekFrom(raw("GET /x HTTP/1.1\r\nHost: example.test:8080\r\n\r\n"));
    expect(r.name).toBe("example.test");
    expect(Buffer.concat(r.head).toString()).toContain("GET /x");
  });

  it.each([
    ["a ClientHello without SNI", (port: number) => tls.connect({ port, host: "127.0.0.1" })],
    ["two Host headers", raw("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n")],
    ["HTTP/1.0 without Host", raw("GET / HTTP/1.0\r\n\r\n")],
    ["CONNECT", raw("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")],
    ["binary bytes", raw(Buffer.from([0, 1, 2, 0xff]))],
    [
      "a TLS record of garbage",
      raw(Buffer.concat([Buffer.from([0x16, 3, 1, 0, 64]), Buffer.alloc(64, 0xee)])),
    ],
    ["a header past the limit", raw(`GET / HTTP/1.1\r\nX: ${"a".repeat(40 * 1024)}`)],
    ["a request head that never ends", raw("GET / HTTP/1.1\r\nHost: a.te")],
  ])("finds no name in %s", async (_what, client) => {
    expect((await peekFrom(client)).name).toBeUndefined();
  });
});
