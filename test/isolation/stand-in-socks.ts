/**
 * A SOCKS5 proxy on the stand-in internet, for the `network.egressProxy`
 * tests: Debian's Dante (`danted`, package dante-server) on a third address
 * of the stand-in ({@link SOCKS.address}), asking RFC 1929 username and
 * password, connecting out from that same address (so the stand-in's servers
 * see the proxy, not the host), resolving names with the stand-in's dnsmasq,
 * and logging every connection it passes. Dante checks the password against
 * the system's password files: it runs in its own mount namespace where a
 * passwd, shadow and resolv.conf made for the run are bound over /etc's, so
 * the host's are neither read nor changed.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { eventually } from "../support/eventually";
import { NAMES } from "./stand-in-names";
import { killAndWait, type StandIn } from "./stand-in-internet";

/** The proxy's address and port, and the account it accepts. */
export const SOCKS = { address: "198.51.100.4", port: 1080, username: "proxy-user" };

/** A running proxy; `close` stops it. */
export interface StandInSocks {
  /** `host:port`, as `egressProxy.address` takes it. */
  address: string;
  /** Dante's log so far. */
  log(): string;
  close(): Promise<void>;
}

/** Starts Dante in `inet`'s namespace, accepting {@link SOCKS.username} with `password`. */
export async function startStandInSocks(inet: StandIn, password: string): Promise<StandInSocks> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-socks-"));
  fs.chmodSync(dir, 0o755);
  let dante: ChildProcess | undefined;
  const logFile = path.join(dir, "danted.log");
  const close = async () => {
    // SIGTERM: Dante's mother process stops its children too.
    await killAndWait(dante, "SIGTERM");
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync("ip", ["-n", inet.ns, "addr", "add", `${SOCKS.address}/24`, "dev", "eth0"]);
    const hash = execFileSync("openssl", ["passwd", "-6", "-stdin"], {
      input: password,
      encoding: "utf8",
    }).trim();
    // Dante's children run as nobody: all but the shadow file must be readable to them.
    const write = (name: string, text: string) =>
      fs.writeFileSync(path.join(dir, name), text, { mode: name === "shadow" ? 0o600 : 0o644 });
    write(
      "passwd",
      [
        "root:x:0:0:root:/root:/bin/sh",
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
        `${SOCKS.username}:x:40000:65534::/nonexistent:/usr/sbin/nologin`,
        "",
      ].join("\n"),
    );
    write("shadow", `${SOCKS.username}:${hash}:19000:0:99999:7:::\n`);
    write("resolv.conf", `nameserver ${NAMES.otherAddress}\n`);
    write(
      "danted.conf",
      `logoutput: ${logFile}
internal: ${SOCKS.address} port = ${SOCKS.port}
external: ${SOCKS.address}
clientmethod: none
socksmethod: username
user.privileged: root
user.unprivileged: nobody
client pass {
  from: 0.0.0.0/0 to: 0.0.0.0/0
  log: error
}
socks pass {
  from: 0.0.0.0/0 to: 0.0.0.0/0
  command: connect
  log: connect error
}
`,
    );
    const binds = ["passwd", "shadow", "resolv.conf"]
      .map((f) => `mount --bind ${dir}/${f} /etc/${f}`)
      .join(" && ");
    dante = spawn(
      "ip",
      [
        "netns",
        "exec",
        inet.ns,
        "unshare",
        "-m",
        "sh",
        "-c",
        `${binds} && exec /usr/sbin/danted -f ${dir}/danted.conf`,
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    await eventually(
      () =>
        execFileSync("ip", ["netns", "exec", inet.ns, "ss", "-ltn", `sport = :${SOCKS.port}`], {
          encoding: "utf8",
        }).includes(SOCKS.address),
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    await close();
    throw err;
  }
  return {
    address: `${SOCKS.address}:${SOCKS.port}`,
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : ""),
    close,
  };
}
