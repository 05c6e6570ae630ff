/**
 * Name resolution a test controls without changing the host: dnsmasq on a
 * loopback address of its own (port 53, as resolv.conf cannot name a port)
 * answers the test's names, and {@link PrivateResolver.run} starts a program
 * in a new mount namespace (`unshare -m`, private propagation) where that
 * address is bind-mounted over `/etc/resolv.conf`. glibc, and so Node's
 * `dns.lookup` (which `fetch` and `https` use), then resolve through it; the
 * host's own resolv.conf is never touched.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { eventually } from "./eventually";

/** What one program run in the namespace did. */
interface NamespaceRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running private resolver. */
export interface PrivateResolver {
  /** Runs `command` with exactly `env` (nothing inherited) in a mount namespace resolving through dnsmasq. */
  run(
    command: string,
    args: string[],
    env: Record<string, string>,
    cwd?: string,
  ): Promise<NamespaceRun>;
  /** Stops dnsmasq and removes its files. */
  close(): void;
}

/** A loopback address unlikely to be in use: 127.0.0.0/8 is all local on Linux. */
export function freeLoopbackAddress(): string {
  const byte = (lo: number) => lo + Math.floor(Math.random() * (254 - lo));
  return `127.${byte(100)}.${byte(1)}.${byte(1)}`;
}

/**
 * Starts dnsmasq answering each `name` of `records` (and every name under
 * it) with its address; nothing else resolves.
 */
export async function startPrivateResolver(
  records: Record<string, string>,
): Promise<PrivateResolver> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-iac-resolver-"));
  const address = freeLoopbackAddress();
  const resolvConf = path.join(dir, "resolv.conf");
  fs.writeFileSync(resolvConf, `nameserver ${address}\n`);
  const dnsmasq: ChildProcess = spawn(
    "dnsmasq",
    [
      "--keep-in-foreground",
      "--no-resolv",
      "--no-hosts",
      "--bind-interfaces",
      `--listen-address=${address}`,
      "--port=53",
      "--pid-file=",
      "--conf-file=/dev/null",
      ...Object.entries(records).map(([name, ip]) => `--address=/${name}/${ip}`),
    ],
    { stdio: "ignore" },
  );
  const close = () => {
    dnsmasq.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // dnsmasq answers once it has bound its address.
    await eventually(
      () =>
        dnsmasq.exitCode === null &&
        execFileSync("ss", ["-lun", "sport = :53"], { encoding: "utf8" }).includes(address),
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    close();
    throw err;
  }
  return {
    run: (command, args, env, cwd) =>
      new Promise((resolve, reject) => {
        const child = spawn(
          "unshare",
          [
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'mount --bind "$0" /etc/resolv.conf && exec "$@"',
            resolvConf,
            command,
            ...args,
          ],
          { env, cwd, stdio: ["ignore", "pipe", "pipe"] },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("error", reject);
        child.once("close", (code) => resolve({ code, stdout, stderr }));
      }),
    close,
  };
}
