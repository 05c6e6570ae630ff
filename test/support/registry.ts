/**
 * A container registry on loopback for the image tests: Debian's
 * `docker-registry` (open, or behind htpasswd basic auth), with test images
 * made offline from what the machine has: a static busybox (Debian's
 * `busybox-static`), assembled with `umoci` and pushed with `skopeo`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs/promises";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { eventually } from "./eventually";

const run = promisify(execFile);

/** A running registry. */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, what image references start with. */
  host: string;
  /** Pushes the OCI image `layout:tag` as `<host>/<name>`. */
  push(layout: string, name: string): Promise<void>;
  /** Stops the registry and removes its storage. */
  close(): Promise<void>;
}

/** Credentials of a registry started with {@link startRegistry}'s `auth`. */
export interface RegistryAuth {
  username: string;
  password: string;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** bcrypt, as the registry's htpasswd wants it (cost 4: the registry checks it on every request). */
async function bcrypt(password: string): Promise<string> {
  const { stdout } = await run("python3", [
    "-W",
    "ignore",
    "-c",
    "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))",
    password,
  ]);
  return stdout.trim();
}

/** Starts `docker-registry` on a free loopback port, behind basic auth when `auth` is given. */
export async function startRegistry(auth?: RegistryAuth): Promise<TestRegistry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "sbx-registry-"));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = [
    "version: 0.1",
    "log:",
    "  level: error",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${path.join(dir, "data")}`,
    "http:",
    `  addr: ${host}`,
  ];
  if (auth) {
    await fs.writeFile(
      path.join(dir, "htpasswd"),
      `${auth.username}:${await bcrypt(auth.password)}\n`,
    );
    config.push(
      "auth:",
      "  htpasswd:",
      "    realm: test",
      `    path: ${path.join(dir, "htpasswd")}`,
    );
  }
  await fs.writeFile(path.join(dir, "config.yml"), `${config.join("\n")}\n`);
  const child: ChildProcess = spawn("docker-registry", ["serve", path.join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
      const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
      return res !== undefined && (res.status === 200 || res.status === 401);
    },
    { timeoutMs: 30_000 },
  );
  return {
    host,
    push: async (layout, name) => {
      const creds = auth ? ["--dest-creds", `${auth.username}:${auth.password}`] : [];
      await run("skopeo", [
        "--insecure-policy",
        "copy",
        "--dest-tls-verify=false",
        ...creds,
        `oci:${layout}`,
        `docker://${host}/${name}`,
      ]);
    },
    close: async () => {
      child.kill("SIGKILL");
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** What the busybox test image holds, for assertions. */
export const BUSYBOX_IMAGE = {
  /** In the image's `Env`: a directory only the image has, first on PATH. */
  path: "/opt/custom/bin:/usr/bin:/bin",
  /** A command in that directory, printing {@link BUSYBOX_IMAGE.helloOutput}. */
  hello: "hello-from-image",
  helloOutput: "hello from the image's PATH",
  /** A file of the first layer and one of the second. */
  firstLayerFile: "/etc/one.txt",
  secondLayerFile: "/etc/two.txt",
  /** A directory of the first layer the second layer deletes (a `.wh.` whiteout). */
  deletedDir: "/gone",
  /** A directory the second layer makes opaque: only `kept.txt` (of layer 2) remains. */
  opaqueDir: "/opq",
} as const;

/**
 * Makes the two-layer busybox image in a new OCI layout and returns
 * `layout:tag`. Layer 1: busybox with its applets, `/bin/bash` (busybox `sh`:
 * the SDK runs commands with `/bin/bash -l -c`, which E2B requires too), a
 * root-only `/etc/passwd`, `/etc/one.txt`, `/gone/sub/f`, `/opq/old.txt`.
 * Layer 2: `/etc/two.txt`, a whiteout of `/gone`, `/opq` made opaque with
 * `kept.txt`. Config: `Env` PATH with a directory of layer 1 first.
 */
export async function makeBusyboxImage(workDir: string): Promise<string> {
  const l1 = path.join(workDir, "l1");
  const l2 = path.join(workDir, "l2");
  const layout = path.join(workDir, "oci");
  const bin = path.join(l1, "bin");
  await fs.mkdir(bin, { recursive: true });
  await fs.copyFile("/bin/busybox", path.join(bin, "busybox"));
  await fs.chmod(path.join(bin, "busybox"), 0o755);
  const { stdout } = await run("/bin/busybox", ["--list"]);
  for (const applet of stdout.split("\n").filter((a) => /^[a-z0-9_.[-]+$/.test(a))) {
    if (applet !== "busybox") await fs.symlink("busybox", path.join(bin, applet)).catch(() => {});
  }
  await fs.writeFile(path.join(bin, "bash"), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 });
  await fs.mkdir(path.join(l1, "etc"));
  await fs.writeFile(path.join(l1, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  await fs.writeFile(path.join(l1, "etc", "group"), "root:x:0:\n");
  await fs.writeFile(path.join(l1, "etc", "one.txt"), "one\n");
  await fs.mkdir(path.join(l1, "opt", "custom", "bin"), { recursive: true });
  await fs.writeFile(
    path.join(l1, "opt", "custom", "bin", BUSYBOX_IMAGE.hello),
    `#!/bin/sh\necho "${BUSYBOX_IMAGE.helloOutput}"\n`,
    { mode: 0o755 },
  );
  await fs.mkdir(path.join(l1, "gone", "sub"), { recursive: true });
  await fs.writeFile(path.join(l1, "gone", "sub", "f"), "doomed\n");
  await fs.mkdir(path.join(l1, "opq"));
  await fs.writeFile(path.join(l1, "opq", "old.txt"), "hidden by layer 2\n");
  await fs.mkdir(path.join(l1, "tmp"), { mode: 0o1777 });

  await fs.mkdir(path.join(l2, "etc"), { recursive: true });
  await fs.writeFile(path.join(l2, "etc", "two.txt"), "two\n");
  await fs.writeFile(path.join(l2, ".wh.gone"), "");
  await fs.mkdir(path.join(l2, "opq"));
  await fs.writeFile(path.join(l2, "opq", ".wh..wh..opq"), "");
  await fs.writeFile(path.join(l2, "opq", "kept.txt"), "kept\n");

  const image = `${layout}:v1`;
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", image]);
  for (const [dir, name] of [
    [l1, "l1.tar"],
    [l2, "l2.tar"],
  ] as const) {
    const tar = path.join(workDir, name);
    await run("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", dir, "-cf", tar, "."]);
    await run("umoci", ["raw", "add-layer", "--image", image, tar]);
  }
  await run("umoci", [
    "config",
    "--image",
    image,
    "--config.env",
    `PATH=${BUSYBOX_IMAGE.path}`,
    "--config.env",
    "IMAGE_GREETING=from-config",
  ]);
  return image;
}

/** Tags a copy of `image` (`layout:tag`) whose config says `architecture`; returns `layout:<architecture>`. */
export async function withArchitecture(image: string, architecture: string): Promise<string> {
  const layout = image.slice(0, image.lastIndexOf(":"));
  await run("umoci", [
    "config",
    "--image",
    image,
    "--tag",
    architecture,
    "--architecture",
    architecture,
  ]);
  return `${layout}:${architecture}`;
}
