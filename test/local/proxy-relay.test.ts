/**
 * The service's relay between one client connection and several agents: a
 * kept-alive connection carrying requests for different sandboxes (as the SDK
 * does with one E2B_SANDBOX_URL) gives each agent only its own requests, and
 * a hostile agent cannot frame a response onto another request.
 */
import * as diagnostics from "node:diagnostics_channel";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { sandboxPaths } from "../../src/local/runtime/paths";
import { ENVD_HEADERS, ENVD_ROUTES, FILES_QUERY } from "../../src/wire/envd";
import { eventually } from "../support/eventually";
import { useService, type TestService } from "../support/service";
import { createSandbox } from "./support";

/**
 * The pools the service's requests to each agent socket went over, by the
 * socket's path. The service runs in this process, so node:http tells the test
 * about every request it sends (`http.client.request.start`), before its
 * first sandbox's `/init`.
 */
const poolsBySocket = new Map<string, Set<http.Agent>>();
diagnostics.subscribe("http.client.request.start", (message) => {
  // Both set from the request's options (Node's ClientRequest), though left out of its types.
  const { request } = message as {
    request: { socketPath?: string; agent?: http.Agent | false };
  };
  if (request.socketPath === undefined || !request.agent) return;
  const pools = poolsBySocket.get(request.socketPath) ?? new Set();
  poolsBySocket.set(request.socketPath, pools.add(request.agent));
});

let svc: TestService;
useService((s) => (svc = s));

interface Exchange {
  status: number;
  body: string;
  /** The client socket the exchange used, to prove requests shared one connection. */
  socket: net.Socket;
  /**
   * Every byte that socket received so far, for every exchange on it: what
   * reached the client, including what its parser dropped or never read.
   */
  received: () => string;
}

/** The bytes each client socket received, recorded by {@link exchange}. */
const receivedBy = new WeakMap<net.Socket, Buffer[]>();

/** One request on `agent` (a one-socket keep-alive pool), routed to `sandboxID` by header. */
function exchange(
  agent: http.Agent,
  sandboxID: string,
  method: "GET" | "POST",
  filePath: string,
  body?: Buffer,
): Promise<Exchange> {
  const url = new URL(svc.sandboxUrl);
  const query = new URLSearchParams({ [FILES_QUERY.path]: filePath });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `${ENVD_ROUTES.files}?${query.toString()}`,
        agent,
        headers: {
          [ENVD_HEADERS.sandboxID]: sandboxID,
          ...(body ? { "content-type": "application/octet-stream" } : {}),
        },
      },
      (res) => {
        // Read now: by "end" a keep-alive pool has taken the socket back and res.socket is null.
        const { socket } = res;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            socket,
            received: () => Buffer.concat(receivedBy.get(socket) ?? []).toString("latin1"),
          }),
        );
      },
    );
    req.on("socket", (socket) => {
      if (receivedBy.has(socket)) return;
      const seen: Buffer[] = [];
      receivedBy.set(socket, seen);
      socket.on("data", (c: Buffer) => seen.push(c));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A one-connection keep-alive pool: every request goes over the same client socket. */
function oneConnection(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}

/** How the hijacker answers until the relay is known to reach it: no body, and the connection ends. */
const PROBE_ANSWER = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";

/**
 * A relayed request to `sandboxID`'s agent that the hijacker answers (204),
 * where the real agent answers the file (200); false when it did not reach
 * the hijacker, or failed on a connection being ended.
 */
async function reachesHijacker(sandboxID: string): Promise<boolean> {
  try {
    const res = await fetch(
      `${svc.sandboxUrl}${ENVD_ROUTES.files}?${FILES_QUERY.path}=/etc/hostname`,
      { headers: { [ENVD_HEADERS.sandboxID]: sandboxID } },
    );
    await res.arrayBuffer();
    return res.status === 204;
  } catch {
    return false;
  }
}

/**
 * Takes over the agent of `sandboxID` with `serve`, as hostile code that took
 * over the agent would answer: every connection the service has to the agent
 * from then on is the hijacker's. Returns every byte the service sent it once
 * the takeover was complete.
 *
 * The hijacker listens at the agent's socket path; the connections the service
 * opened to the real agent before (its `/init`, its warm-up command, relayed
 * requests) are ended, as the hostile agent holding them may end them, so the
 * service connects anew, to the hijacker. Until a relayed request is seen to
 * reach it, the hijacker answers each with {@link PROBE_ANSWER} and records
 * nothing; only connections accepted after that go to `serve`.
 */
async function hijackAgent(
  sandboxID: string,
  serve: (sock: net.Socket, received: () => string) => void,
): Promise<{ received: () => string; close: () => Promise<void> }> {
  const { socket } = sandboxPaths(svc.dataDir, sandboxID);
  fs.rmSync(socket);
  let takenOver = false;
  const seen: Buffer[] = [];
  const received = (): string => Buffer.concat(seen).toString("latin1");
  const open = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    open.add(sock);
    sock.on("close", () => open.delete(sock));
    sock.on("error", () => undefined);
    if (takenOver) {
      sock.on("data", (c: Buffer) => seen.push(c));
      serve(sock, received);
    } else {
      onEachRequest(sock, () => sock.end(PROBE_ANSWER));
    }
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  // The socket's path now leads to the hijacker alone: end what still leads to the real agent.
  for (const pool of poolsBySocket.get(socket) ?? []) pool.destroy();
  await eventually(() => reachesHijacker(sandboxID));
  takenOver = true;
  return {
    received,
    // The service keeps idle connections to an agent: end them with the server.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const sock of open) sock.destroy();
      }),
  };
}

/** Calls `answer` once per request head the hostile agent receives on `sock`. */
function onEachRequest(sock: net.Socket, answer: (n: number) => void): void {
  let buffered = "";
  let count = 0;
  sock.on("data", (c: Buffer) => {
    buffered += c.toString("latin1");
    while (buffered.includes("\r\n\r\n")) {
      buffered = buffered.slice(buffered.indexOf("\r\n\r\n") + 4);
      answer(count++);
    }
  });
}

describe("proxy relay", () => {
  it("keeps one client connection for requests to several sandboxes, each body reaching only its sandbox", async () => {
    const a = await createSandbox(svc);
    const b = await createSandbox(svc);
    const agent = oneConnection();
    try {
      const bodyA = Buffer.alloc(3 * 1024 * 1024, "a");
      const bodyB = Buffer.alloc(2 * 1024 * 1024 + 7, "b");
      const upA = await exchange(agent, a.sandboxID, "POST", "/home/user/mine.bin", bodyA);
      const upB = await exchange(agent, b.sandboxID, "POST", "/home/user/mine.bin", bodyB);
      expect([upA.status, upB.status]).toEqual([200, 200]);
      const downA = await exchange(agent, a.sandboxID, "GET", "/home/user/mine.bin");
      const downB = await exchange(agent, b.sandboxID, "GET", "/home/user/mine.bin");
      expect(downA.body).toBe(bodyA.toString("utf8"));
      expect(downB.body).toBe(bodyB.toString("utf8"));
      // All four exchanges rode the same client connection.
      expect(new Set([upA.socket, upB.socket, downA.socket, downB.socket]).size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it("never lets a hostile agent frame a second response onto the next request", async () => {
    const hostile = await createSandbox(svc);
    const honest = await createSandbox(svc);
    const agent = oneConnection();
    const seed = await exchange(
      agent,
      honest.sandboxID,
      "POST",
      "/home/user/real.txt",
      Buffer.from("the honest sandbox's file"),
    );
    expect(seed.status).toBe(200);
    // Each answer carries a complete extra response after the first one.
    const fake = await hijackAgent(hostile.sandboxID, (sock) =>
      onEachRequest(sock, () =>
        sock.write(
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
            "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled",
        ),
      ),
    );
    try {
      const first = await exchange(agent, hostile.sandboxID, "GET", "/etc/hostname");
      expect(first).toMatchObject({ status: 200, body: "ok" });
      const next = await exchange(agent, honest.sandboxID, "GET", "/home/user/real.txt");
      expect(next).toMatchObject({ status: 200, body: "the honest sandbox's file" });
      const again = await exchange(agent, hostile.sandboxID, "GET", "/etc/hostname");
      expect(again).toMatchObject({ status: 200, body: "ok" });
      // No byte of the extra responses reached the client: a client that takes it as the
      // answer to its next request, or one like Node's that drops the connection on it.
      expect(first.received()).not.toContain("smuggled");
      expect(new Set([first.socket, next.socket, again.socket]).size).toBe(1);
    } finally {
      agent.destroy();
      await fake.close();
    }
  });

  it("cuts the client's response when a hostile agent ends before the length it announced", async () => {
    const hostile = await createSandbox(svc);
    const fake = await hijackAgent(hostile.sandboxID, (sock) =>
      onEachRequest(sock, () =>
        sock.end("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."),
      ),
    );
    try {
      const res = await fetch(
        `${svc.sandboxUrl}${ENVD_ROUTES.files}?${FILES_QUERY.path}=/etc/hostname`,
        { headers: { [ENVD_HEADERS.sandboxID]: hostile.sandboxID } },
      );
      // Headers were relayed; the body must fail, never end cleanly short.
      await expect(res.text()).rejects.toThrow();
    } finally {
      await fake.close();
    }
  });

  it("relays a stream's headers while the agent has sent none of its body yet, then the body", async () => {
    const sbx = await createSandbox(svc);
    let sendBody!: () => void;
    const bodyAllowed = new Promise<void>((resolve) => (sendBody = resolve));
    // A stream that starts with headers alone (a watch before its first event).
    const fake = await hijackAgent(sbx.sandboxID, (sock) =>
      onEachRequest(sock, () => {
        sock.write(
          "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        void bodyAllowed.then(() => sock.write("5\r\nevent\r\n0\r\n\r\n"));
      }),
    );
    try {
      // fetch settles on the response's headers: the body is held until they arrived.
      const res = await fetch(
        `${svc.sandboxUrl}${ENVD_ROUTES.files}?${FILES_QUERY.path}=/etc/hostname`,
        { headers: { [ENVD_HEADERS.sandboxID]: sbx.sandboxID } },
      );
      expect(res.headers.get("content-type")).toBe("application/connect+json");
      sendBody();
      expect(await res.text()).toBe("event");
    } finally {
      await fake.close();
    }
  });

  it("sends a hostile agent nothing of the requests for other sandboxes on the same connection", async () => {
    const hostile = await createSandbox(svc);
    const other = await createSandbox(svc);
    const agent = oneConnection();
    const fake = await hijackAgent(hostile.sandboxID, (sock) =>
      onEachRequest(sock, () => sock.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")),
    );
    try {
      await exchange(agent, hostile.sandboxID, "GET", "/etc/hostname");
      const secret = Buffer.from("secret-for-the-other-sandbox");
      const up = await exchange(agent, other.sandboxID, "POST", "/home/user/secret.txt", secret);
      expect(up.status).toBe(200);
      await exchange(agent, hostile.sandboxID, "GET", "/etc/hostname");
      // The hostile agent saw its own two requests, and not the other's path or body. Counted
      // wherever they start: a body relayed before one (a leak) leaves it mid-line.
      const count = (text: string) => fake.received().split(text).length - 1;
      await eventually(async () => count(`GET ${ENVD_ROUTES.files}?`) >= 2);
      expect(fake.received()).not.toContain("secret-for-the-other-sandbox");
      expect(fake.received()).not.toContain("secret.txt");
      expect(fake.received()).not.toContain(other.sandboxID);
      // Nothing else either: two request lines in all.
      expect(count(" HTTP/1.1\r\n")).toBe(2);
    } finally {
      agent.destroy();
      await fake.close();
    }
  });
});
