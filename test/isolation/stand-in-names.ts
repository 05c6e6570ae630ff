/**
 * Names on the stand-in internet, for the domain allow-list tests: a second
 * address on the stand-in ({@link NAMES.otherAddress}), dnsmasq answering the
 * test names there, and an HTTP (80) and HTTPS (443) server on both
 * addresses, with a certificate for every test name signed by a CA made for
 * the run. The servers answer `<http|https> <Host> <path>`, except on
 * `/headers`, where they answer the request's headers as JSON with
 * `authorization` replaced by `sha256:<hex>` of its value (so the test sees
 * what the server got without the value ever going back into a sandbox), and
 * on `/peer`, where they answer the address the connection came from.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { eventually } from "../support/eventually";
import { makeTestCa } from "../support/test-ca";
import { killAndWait, STAND_IN, type StandIn } from "./stand-in-internet";

/** The stand-in's addresses and what its resolver answers. */
export const NAMES = {
  /** The stand-in's own address: where every test name points, except `elsewhere.test`. */
  address: STAND_IN.address,
  /** Second address of the stand-in: its resolver, and where `elsewhere.test` points. */
  otherAddress: "198.51.100.3",
  /** dnsmasq's `--address=/name/ip`: the name and every name under it. */
  records: {
    "allowed.test": STAND_IN.address,
    "other.test": STAND_IN.address,
    "wild.test": STAND_IN.address,
    "elsewhere.test": "198.51.100.3",
  },
};

/** The running extras; `close` stops them (the stand-in's own close removes the namespace). */
export interface StandInNames {
  /** PEM of the CA that signed the HTTPS server's certificate. */
  caPem: string;
  /** dnsmasq's log of the queries it answered so far (`query[A] <name> from <address>`). */
  dnsLog(): string;
  /** Resolves once dnsmasq and the servers exited and their files are gone. */
  close(): Promise<void>;
}

/** Starts the resolver and the servers in `inet`'s namespace. */
export async function startStandInNames(inet: StandIn): Promise<StandInNames> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-names-"));
  const children: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(children.map((c) => killAndWait(c)));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ca = makeTestCa(
      dir,
      Object.keys(NAMES.records).flatMap((n) => [n, `*.${n}`]),
    );
    const caPem = fs.readFileSync(ca.caFile, "utf8");
    execFileSync("ip", ["-n", inet.ns, "addr", "add", `${NAMES.otherAddress}/24`, "dev", "eth0"]);
    const records = Object.entries(NAMES.records).map(([n, ip]) => `--address=/${n}/${ip}`);
    const dnsmasq = spawn(
      "ip",
      [
        "netns",
        "exec",
        inet.ns,
        "dnsmasq",
        "--keep-in-foreground",
        "--no-resolv",
        "--no-hosts",
        "--bind-interfaces",
        `--listen-address=${NAMES.otherAddress}`,
        "--pid-file=",
        "--log-queries",
        `--log-facility=${dir}/dnsmasq.log`,
        ...records,
      ],
      { stdio: "ignore" },
    );
    children.push(dnsmasq);
    const code = `
const fs = require("fs"), http = require("http"), https = require("https"), crypto = require("crypto");
const sha = (v) => "sha256:" + crypto.createHash("sha256").update(v).digest("hex");
const headers = (q) => JSON.stringify({ ...q.headers, ...(q.headers.authorization ? { authorization: sha(q.headers.authorization) } : {}) });
const answer = (proto) => (q, s) => s.end(q.url === "/headers" ? headers(q) : q.url === "/peer" ? q.socket.remoteAddress : proto + " " + q.headers.host + " " + q.url);
const tls = { key: fs.readFileSync("${dir}/server.key"), cert: fs.readFileSync("${dir}/server.pem") };
http.createServer(answer("http")).listen(80, "0.0.0.0");
https.createServer(tls, answer("https")).listen(443, "0.0.0.0", () => console.log("up"));`;
    const servers = spawn("ip", ["netns", "exec", inet.ns, process.execPath, "-e", code], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(servers);
    await new Promise<void>((resolve, reject) => {
      servers.stdout.once("data", () => resolve());
      servers.once("exit", (c) => reject(new Error(`stand-in servers exited with ${String(c)}`)));
    });
    // dnsmasq answers once it has bound its address.
    await eventually(
      () =>
        execFileSync("ip", ["netns", "exec", inet.ns, "ss", "-lun", `sport = :53`], {
          encoding: "utf8",
        }).includes(NAMES.otherAddress),
      { timeoutMs: 30_000 },
    );
    const dnsLog = () =>
      fs.existsSync(`${dir}/dnsmasq.log`) ? fs.readFileSync(`${dir}/dnsmasq.log`, "utf8") : "";
    return { caPem, dnsLog, close };
  } catch (err) {
    await close();
    throw err;
  }
}
