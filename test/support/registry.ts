/**
 * A container registry on loopback for the image tests: Debian's
 * `docker-registry` (open, or behind htpasswd basic auth), with test images
 * made offline from what the machine has: a static busybox (Debian's
 * `busybox-static`), assembled with `umoci` and pushed with `skopeo`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { promisify } from "node:util";
import { eventually } from "./eventually";

const run = promisify(execFile);

/** A running registry. */
export interface TestRegistry {
  /** `127.0.0.1:<port>`, what image references start with. */
  host: string;
  /**
   * Pushes the OCI image `layout:tag` as `<host>/<name>`; with `zstd`, its
   * layers are stored zstd-compressed (an OCI manifest, as Docker's has no zstd).
   */
  push(layout: string, name: string, opts?: { zstd?: boolean }): Promise<void>;
  /** The digests of the blobs fetched with GET so far, in order (layers and configs). */
  blobGets(): string[];
  /** The layers of the pushed image `<name>:<tag>` (`name` as given to push), lowest first. */
  layers(nameAndTag: string): Promise<{ digest: string; mediaType: string }[]>;
  /** Stops the registry and removes its storage. */
  close(): Promise<void>;
}

/** Credentials of a registry started with {@link startRegistry}'s `auth`. */
export interface RegistryAuth {
  username: string;
  password: string;
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
  const config = [
    "version: 0.1",
    "log:",
    // info: each request's method, URI and status, which blobGets() reads
    "  level: info",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${path.join(dir, "data")}`,
    "http:",
    // Port 0: the registry binds a free port itself and logs it, so no other process can take
    // the port between a probe for a free one and the bind.
    "  addr: 127.0.0.1:0",
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
  let listening: string | undefined;
  const gets: string[] = [];
  readline.createInterface({ input: child.stderr! }).on("line", (line) => {
    stderr = (stderr + line + "\n").slice(-4000);
    // Logged once the socket listens: connections queue from then on.
    listening ??= /msg="listening on (127\.0\.0\.1:\d+)"/.exec(line)?.[1];
    const get =
      /msg="response completed".*http\.request\.method=GET .*http\.request\.uri="\/v2\/[^"]*\/blobs\/(sha256:[0-9a-f]{64})".*http\.response\.status=200/.exec(
        line,
      );
    if (get) gets.push(get[1]);
  });
  const host = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
      return listening ?? false;
    },
    { timeoutMs: 30_000 },
  );
  return {
    host,
    push: async (layout, name, opts = {}) => {
      const creds = auth ? ["--dest-creds", `${auth.username}:${auth.password}`] : [];
      let src = `oci:${layout}`;
      const plain = path.join(dir, `plain-${name.replace(/[^a-z0-9]/g, "-")}`);
      if (opts.zstd) {
        // skopeo compresses only uncompressed layers to the format asked for: decompress first.
        await run("skopeo", [
          "--insecure-policy",
          "copy",
          "--dest-decompress",
          src,
          `dir:${plain}`,
        ]);
        src = `dir:${plain}`;
      }
      await run("skopeo", [
        "--insecure-policy",
        "copy",
        "--dest-tls-verify=false",
        ...(opts.zstd ? ["--dest-compress-format", "zstd", "--format", "oci"] : []),
        ...creds,
        src,
        `docker://${host}/${name}`,
      ]);
      await fs.rm(plain, { recursive: true, force: true });
    },
    blobGets: () => [...gets],
    layers: async (nameAndTag) => {
      const colon = nameAndTag.lastIndexOf(":");
      const res = await fetch(
        `http://${host}/v2/${nameAndTag.slice(0, colon)}/manifests/${nameAndTag.slice(colon + 1)}`,
        {
          headers: {
            accept:
              "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
            ...(auth
              ? {
                  authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`,
                }
              : {}),
          },
        },
      );
      if (!res.ok) throw new Error(`manifest of ${nameAndTag}: HTTP ${res.status}`);
      const manifest = (await res.json()) as { layers: { digest: string; mediaType: string }[] };
      return manifest.layers.map(({ digest, mediaType }) => ({ digest, mediaType }));
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
  await writeBusybox(l1);
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
  await addLayer(image, l1);
  await addLayer(image, l2);
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

/**
 * busybox with its applets, `/bin/bash` (busybox `sh`: the SDK runs commands
 * with `/bin/bash -l -c`, which E2B requires too), and a root-only
 * `/etc/passwd` and `/etc/group`, written into the directory `root`.
 */
async function writeBusybox(root: string): Promise<void> {
  const bin = path.join(root, "bin");
  await fs.mkdir(bin, { recursive: true });
  await fs.copyFile("/bin/busybox", path.join(bin, "busybox"));
  await fs.chmod(path.join(bin, "busybox"), 0o755);
  const { stdout } = await run("/bin/busybox", ["--list"]);
  for (const applet of stdout.split("\n").filter((a) => /^[a-z0-9_.[-]+$/.test(a))) {
    if (applet !== "busybox") await fs.symlink("busybox", path.join(bin, applet)).catch(() => {});
  }
  await fs.writeFile(path.join(bin, "bash"), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 });
  await fs.mkdir(path.join(root, "etc"));
  await fs.writeFile(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  await fs.writeFile(path.join(root, "etc", "group"), "root:x:0:\n");
}

/** Adds the directory `dir` as a new top layer of `image` (`layout:tag`), or of a copy tagged `tag`. */
async function addLayer(image: string, dir: string, tag?: string): Promise<void> {
  const tar = `${dir}.tar`;
  await run("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", dir, "-cf", tar, "."]);
  await run("umoci", ["raw", "add-layer", "--image", image, ...(tag ? ["--tag", tag] : []), tar]);
  await fs.rm(tar);
}

/**
 * Tags a copy of `image` (`layout:tag`) with one more layer holding `files`
 * (absolute path → content); returns `layout:<tag>`. Its lower layers are
 * `image`'s, blob for blob.
 */
export async function withLayer(
  image: string,
  tag: string,
  files: Record<string, string>,
): Promise<string> {
  const layout = image.slice(0, image.lastIndexOf(":"));
  const dir = path.join(path.dirname(layout), `layer-${tag}`);
  for (const [file, content] of Object.entries(files)) {
    await fs.mkdir(path.join(dir, path.dirname(file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), content);
  }
  await addLayer(image, dir, tag);
  return `${layout}:${tag}`;
}

/**
 * Tags a copy of `image` (`layout:tag`) with one more layer holding the
 * host's real `/bin/bash` and the libraries `ldd` names for it; returns
 * `layout:<tag>`. The busybox image's `bash` is busybox `sh`, enough to run
 * commands but not the bash scripts the build's COPY step runs (E2B requires
 * bash in an image, which Debian-based images have).
 */
export async function withHostBash(image: string, tag: string): Promise<string> {
  const layout = image.slice(0, image.lastIndexOf(":"));
  const dir = path.join(path.dirname(layout), `layer-${tag}`);
  const { stdout } = await run("ldd", ["/bin/bash"]);
  const libs = [...stdout.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]);
  for (const file of ["/bin/bash", ...libs]) {
    await fs.mkdir(path.join(dir, path.dirname(file)), { recursive: true });
    await fs.copyFile(await fs.realpath(file), path.join(dir, file));
    await fs.chmod(path.join(dir, file), 0o755);
  }
  await addLayer(image, dir, tag);
  return `${layout}:${tag}`;
}

/**
 * Makes a one-layer busybox image in a new OCI layout and returns
 * `layout:tag`; its layer also holds `/etc/marker` with `marker`, which makes
 * the layer's content unique (a registry push may otherwise reuse a
 * gzip-compressed copy of the same content where zstd was asked for).
 */
export async function makeSingleLayerImage(workDir: string, marker: string): Promise<string> {
  const root = path.join(workDir, "single");
  const layout = path.join(workDir, "oci-single");
  await writeBusybox(root);
  await fs.writeFile(path.join(root, "etc", "marker"), `${marker}\n`);
  const image = `${layout}:v1`;
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", image]);
  await addLayer(image, root);
  await run("umoci", ["config", "--image", image, "--config.env", "PATH=/usr/bin:/bin"]);
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
