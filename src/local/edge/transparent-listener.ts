/**
 * The edge's listening socket, made for TPROXY.
 *
 * How the edge learns where a sandbox's connection was going, and why this
 * way: nftables' `tproxy` hands the sandbox's SYN to this socket without
 * rewriting it, so the accepted socket's *local* address and port are the
 * original destination (`socket.localAddress` / `localPort`, no lookup).
 * The alternatives need what Node lacks: REDIRECT/DNAT hides the original
 * destination behind `getsockopt(SO_ORIGINAL_DST)` (no Node API; a native
 * addon to build), or a `conntrack` query per connection (a process per
 * flow, milliseconds, and a race with the event stream). TPROXY needs only a
 * listening socket with `IP_TRANSPARENT`, which Node cannot set either: the
 * distribution's Python creates it, and hands it to a short-lived Node
 * process that sends the listening server to this process over Node's IPC
 * channel (documented `send(message, server)`), once per service.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type * as net from "node:net";
import { SandboxIacError } from "../../errors";
import { SYSTEM_PYTHON } from "../runtime/constants";

/** Creates the socket (IP_TRANSPARENT is 19 in linux/in.h) and runs Node with it inheritable. */
const CREATE_SOCKET = `
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_IP, 19, 1)
s.bind(("127.0.0.1", 0))
s.listen(4096)
os.set_inheritable(s.fileno(), True)
os.execv(sys.argv[1], [sys.argv[1], "-e", sys.argv[2], str(s.fileno())])
`;

/** Adopts the descriptor and sends the listening server to the parent. */
const SEND_SERVER = `const s = require("node:net").createServer();
s.listen({ fd: Number(process.argv[1]) }, () => process.send("listening", s, () => process.exit(0)));`;

/**
 * A server listening on an ephemeral port of 127.0.0.1 with `IP_TRANSPARENT`
 * (nftables' `tproxy ip to 127.0.0.1:<port>` delivers to it).
 */
export function transparentListener(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    const child = spawn(SYSTEM_PYTHON, ["-c", CREATE_SOCKET, process.execPath, SEND_SERVER], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    let settled = false;
    child.once("message", (_msg, handle) => {
      settled = true;
      resolve(handle as net.Server);
    });
    const fail = (detail: string) => {
      if (settled) return;
      settled = true;
      reject(
        new SandboxIacError(
          "internal",
          `could not open the egress edge's transparent socket (${detail}): the service needs root and Debian's python3`,
          { operation: "edge.listen" },
        ),
      );
    };
    child.once("error", (err) => fail(err.message));
    child.once("close", (code) =>
      fail(stderr.trim() || `exit ${String(code)} before sending the socket`),
    );
  });
}
