/**
 * Assembles the built-in base layer from the host, without downloads: the
 * host's `/etc` (with a sandbox user and without host secrets), an empty
 * directory skeleton and the `/bin`-style symlinks of a merged-`/usr` host.
 * The host's `/usr` itself is never copied: it is the lowest `/usr` layer of
 * every sandbox. See base-layer.md for the list users read.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { BASE_LAYER_ID, BASE_VERSION_FILE, LAYERS_DIR, SANDBOX_USER } from "./constants";
import { execHost } from "./exec";
import { layerPaths } from "./paths";
import { writeSudoShim } from "./sudo-shim";

/**
 * Version of the recipe below. Bump it whenever the skeleton changes so that
 * existing data dirs rebuild their base layer on the next start.
 */
const BASE_RECIPE_VERSION = "5";

const OPERATION = "runtime.baseLayer";

/** Top-level entries that are symlinks into `/usr` on merged-`/usr` hosts. */
const USR_SYMLINK_CANDIDATES = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/** Directories of the skeleton with their modes; owners are root unless listed in {@link USER_OWNED}. */
const SKELETON_DIRS: ReadonlyArray<[string, number]> = [
  ["home", 0o755],
  [SANDBOX_USER.home.slice(1), 0o755],
  ["root", 0o700],
  ["tmp", 0o1777],
  ["var", 0o755],
  ["var/tmp", 0o1777],
  ["var/log", 0o755],
  ["var/cache", 0o755],
  ["var/lib", 0o755],
  ["opt", 0o755],
  ["mnt", 0o755],
  ["run", 0o755],
  ["run/sandbox-iac", 0o755],
  ["proc", 0o555],
  ["dev", 0o755],
  ["sys", 0o555],
  ["usr", 0o755],
  [".sandbox-iac", 0o755],
  [".sandbox-iac/agent", 0o755],
];

const USER_OWNED = new Set([SANDBOX_USER.home.slice(1)]);

/** Host files under `/etc` that must not reach a sandbox: private keys and password backups. */
const ETC_SECRETS = [/^ssh\/ssh_host_.*_key$/, /^shadow-$/, /^gshadow-$/, /^machine-id$/];

/**
 * Ensures `<dataDir>/layers/base` exists and matches {@link BASE_RECIPE_VERSION}
 * and `trustedCaPem` (the egress edge's CA, added to the layer's system store
 * `/etc/ssl/certs/ca-certificates.crt`); builds it in a temporary directory
 * and renames it into place otherwise.
 */
export async function ensureBaseLayer(dataDir: string, trustedCaPem: string): Promise<void> {
  const base = layerPaths(dataDir, BASE_LAYER_ID);
  const marker = path.join(base.dir, BASE_VERSION_FILE);
  const current = await fs.readFile(marker, "utf8").catch(() => undefined);
  const ca = createHash("sha256").update(trustedCaPem).digest("hex").slice(0, 16);
  const version = `${BASE_RECIPE_VERSION}+ca.${ca}`;
  if (current === version) return;

  const layers = path.join(dataDir, LAYERS_DIR);
  await fs.mkdir(layers, { recursive: true });
  const tmp = path.join(layers, `.tmp-base-${randomBytes(6).toString("hex")}`);
  try {
    await buildBase(tmp);
    await trustCa(path.join(tmp, "root", "etc"), trustedCaPem);
    await fs.writeFile(path.join(tmp, BASE_VERSION_FILE), version);
    if (current !== undefined || (await exists(base.dir))) {
      const old = path.join(layers, `.old-base-${randomBytes(6).toString("hex")}`);
      await fs.rename(base.dir, old);
      await fs.rename(tmp, base.dir);
      await fs.rm(old, { recursive: true, force: true });
    } else {
      await fs.rename(tmp, base.dir);
    }
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function buildBase(dir: string): Promise<void> {
  const root = path.join(dir, "root");
  await fs.mkdir(root, { recursive: true });
  await fs.mkdir(path.join(dir, "usr"), { mode: 0o755 });
  await writeSudoShim(path.join(dir, "usr"));
  for (const [rel, mode] of SKELETON_DIRS) {
    const p = path.join(root, rel);
    await fs.mkdir(p, { recursive: true });
    await fs.chmod(p, mode);
    if (USER_OWNED.has(rel)) await fs.chown(p, SANDBOX_USER.uid, SANDBOX_USER.gid);
  }
  // Mount point for the Node binary bound read-only inside.
  await fs.writeFile(path.join(root, ".sandbox-iac", "node"), "");
  for (const name of USR_SYMLINK_CANDIDATES) {
    const target = await fs.readlink(path.join("/", name)).catch(() => undefined);
    if (target !== undefined) await fs.symlink(target, path.join(root, name));
  }
  // cp -a keeps owners, modes, symlinks and xattrs of the host's /etc.
  await execHost(OPERATION, "cp", ["-a", "/etc", path.join(root, "etc")]);
  await scrubEtc(path.join(root, "etc"));
  await avoidProfileFork(path.join(root, "etc"));
  await likeE2BPython(root, path.join(dir, "usr"));
  // The package database matches the host /usr every sandbox sees, so dpkg and apt keep working.
  if (await exists("/var/lib/dpkg")) {
    await execHost(OPERATION, "cp", ["-a", "/var/lib/dpkg", path.join(root, "var/lib/dpkg")]);
  }
}

/** Adds `pem` to the copied `/etc`'s system store (Debian's bundle), when there is one. */
async function trustCa(etc: string, pem: string): Promise<void> {
  const bundle = path.join(etc, "ssl", "certs", "ca-certificates.crt");
  // The copy of the host's /etc: a symlink here would point into the host's own files.
  const st = await fs.lstat(bundle).catch(() => undefined);
  if (!st?.isFile()) return;
  const text = await fs.readFile(bundle, "utf8");
  await fs.writeFile(bundle, `${text}${text.endsWith("\n") ? "" : "\n"}${pem}`);
  await fs.writeFile(path.join(etc, "ssl", "certs", "sandbox-iac-edge-ca.pem"), pem, {
    mode: 0o644,
  });
}

async function scrubEtc(etc: string): Promise<void> {
  for (const rel of await listFiles(etc)) {
    if (ETC_SECRETS.some((re) => re.test(rel))) await fs.rm(path.join(etc, rel), { force: true });
  }
  const u = SANDBOX_USER;
  const passwd = withoutEntries(
    await readText(etc, "passwd"),
    (f) => f[0] === u.name || f[2] === String(u.uid),
  );
  passwd.push(`${u.name}:x:${u.uid}:${u.gid}::${u.home}:${u.shell}`);
  await writeText(etc, "passwd", passwd, 0o644);

  const group = withoutEntries(
    await readText(etc, "group"),
    (f) => f[0] === u.name || f[2] === String(u.gid),
  );
  group.push(`${u.name}:x:${u.gid}:`);
  await writeText(etc, "group", group, 0o644);

  // The host's password hashes stay on the host: every account gets a locked password.
  const names = passwd.map((l) => l.split(":")[0]);
  await writeText(
    etc,
    "shadow",
    names.map((n) => `${n}:*:19000:0:99999:7:::`),
    0o640,
  );
  const groups = group.map((l) => l.split(":")[0]);
  await writeText(
    etc,
    "gshadow",
    groups.map((g) => `${g}:!::`),
    0o640,
  );

  await writeNetworkFiles(etc);
}

/**
 * `/etc/hostname`, `/etc/hosts` (localhost only) and `/etc/resolv.conf` (the
 * host's resolver configuration, by content) into the layer's `etc`: every
 * sandbox gets these, whether its template starts from `base` or an image.
 */
export async function writeNetworkFiles(etc: string): Promise<void> {
  await writeText(etc, "hostname", ["sandbox"], 0o644);
  await writeText(
    etc,
    "hosts",
    [
      "127.0.0.1\tlocalhost",
      "::1\tlocalhost ip6-localhost ip6-loopback",
      "ff02::1\tip6-allnodes",
      "ff02::2\tip6-allrouters",
    ],
    0o644,
  );
  // The host's resolv.conf is often a symlink into /run, which a sandbox does not see: copy its content.
  const resolv = await fs
    .readFile("/etc/resolv.conf", "utf8")
    .catch(() => "nameserver 127.0.0.1\n");
  await fs.rm(path.join(etc, "resolv.conf"), { force: true });
  await fs.writeFile(path.join(etc, "resolv.conf"), resolv, { mode: 0o644 });
}

/**
 * Python as E2B's base image has it: `pip install` and `pip install --user`
 * work (Debian 12 marks its Python "externally managed" and refuses both; the
 * sandbox is the environment, so `/etc/pip.conf` turns that off), and
 * `python` runs `python3` when the host has only the latter.
 */
async function likeE2BPython(root: string, usr: string): Promise<void> {
  const conf = path.join(root, "etc", "pip.conf");
  const current = await fs.readFile(conf, "utf8").catch(() => "");
  if (!/break-system-packages/.test(current)) {
    const text = /^\[global\]/m.test(current)
      ? current.replace(
          /^\[global\][^\n]*\n?/m,
          (g) => `${g.endsWith("\n") ? g : `${g}\n`}break-system-packages = true\n`,
        )
      : `[global]\nbreak-system-packages = true\n${current}`;
    await fs.rm(conf, { force: true });
    await fs.writeFile(conf, text, { mode: 0o644 });
  }
  if (!(await exists("/usr/bin/python")) && (await exists("/usr/bin/python3"))) {
    await fs.mkdir(path.join(usr, "local", "bin"), { recursive: true, mode: 0o755 });
    await fs.symlink("/usr/bin/python3", path.join(usr, "local", "bin", "python"));
  }
}

/**
 * Debian's `/etc/profile` asks `"$(id -u)"`, a fork and exec on every login
 * shell, and every SDK command is `bash -l -c`: about 8 ms of each command
 * (measured: 12.4 ms vs 4.5 ms per `bash -l`). Bash knows its `EUID`; other
 * shells still run `id -u`, so the outcome is the same for every shell.
 */
async function avoidProfileFork(etc: string): Promise<void> {
  const file = path.join(etc, "profile");
  const text = await fs.readFile(file, "utf8").catch(() => undefined);
  if (text === undefined || !text.includes('"$(id -u)"')) return;
  const st = await fs.stat(file);
  await fs.writeFile(file, text.split('"$(id -u)"').join('"${EUID:-$(id -u)}"'));
  await fs.chmod(file, st.mode & 0o7777);
}

function withoutEntries(lines: string[], drop: (fields: string[]) => boolean): string[] {
  return lines.filter((l) => l.trim() !== "" && !drop(l.split(":")));
}

async function readText(dir: string, name: string): Promise<string[]> {
  const text = await fs.readFile(path.join(dir, name), "utf8").catch(() => "");
  return text.split("\n");
}

/** Writes `lines` to `dir/name` with `mode`, replacing what was there (a symlink included). */
export async function writeText(
  dir: string,
  name: string,
  lines: string[],
  mode: number,
): Promise<void> {
  const p = path.join(dir, name);
  await fs.rm(p, { force: true });
  await fs.writeFile(p, `${lines.join("\n")}\n`, { mode });
  await fs.chmod(p, mode);
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, rel)));
    else out.push(rel);
  }
  return out;
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}
