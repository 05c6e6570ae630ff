/**
 * A container registry on loopback for the demos and the image benchmark
 * (plain JavaScript, run without a build step): Debian's `docker-registry`,
 * with images made offline from what the machine has (a static busybox from
 * Debian's `busybox-static`, layers assembled with `umoci`, pushed with
 * `skopeo`). The test fixture test/support/registry.ts does the same for the
 * tests, with the extras they assert on.
 */
"use strict";
const { execFile, spawn } = require("node:child_process");
const fs = require("node:fs/promises");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");
const { promisify } = require("node:util");

const run = promisify(execFile);

async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * Starts `docker-registry` on a free loopback port, storing its blobs under
 * `dir` (kept by the caller: a registry restarted on the same directory
 * serves what was pushed before). Resolves with `{ host, close() }` once it
 * answers `/v2/`.
 */
async function startRegistry(dir) {
  await fs.mkdir(dir, { recursive: true });
  const host = `127.0.0.1:${await freePort()}`;
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
  await fs.writeFile(path.join(dir, "config.yml"), `${config.join("\n")}\n`);
  const child = spawn("docker-registry", ["serve", path.join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited: ${stderr}`);
    const res = await fetch(`http://${host}/v2/`).catch(() => undefined);
    if (res && res.status === 200) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`docker-registry did not answer on ${host} in 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    host,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Whether the registry at `host` has the manifest `name:tag`. */
async function hasImage(host, nameAndTag) {
  const colon = nameAndTag.lastIndexOf(":");
  const res = await fetch(
    `http://${host}/v2/${nameAndTag.slice(0, colon)}/manifests/${nameAndTag.slice(colon + 1)}`,
    {
      method: "HEAD",
      headers: {
        accept:
          "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
      },
    },
  ).catch(() => undefined);
  return res !== undefined && res.status === 200;
}

/** Pushes the OCI image `layout:tag` to the registry at `host` as `nameAndTag`. */
async function pushImage(image, host, nameAndTag) {
  await run("skopeo", [
    "--insecure-policy",
    "copy",
    "--dest-tls-verify=false",
    `oci:${image}`,
    `docker://${host}/${nameAndTag}`,
  ]);
}

/**
 * Writes into `root` a minimal root filesystem: busybox with its applets,
 * `/bin/bash` (busybox `sh`: the SDK runs commands with `/bin/bash -l -c`,
 * which E2B requires of an image), a root-only `/etc/passwd` and `/etc/group`,
 * and a world-writable `/tmp`.
 */
async function writeBusyboxRoot(root) {
  const bin = path.join(root, "bin");
  await fs.mkdir(bin, { recursive: true });
  await fs.copyFile("/bin/busybox", path.join(bin, "busybox"));
  await fs.chmod(path.join(bin, "busybox"), 0o755);
  const { stdout } = await run("/bin/busybox", ["--list"]);
  for (const applet of stdout.split("\n").filter((a) => /^[a-z0-9_.[-]+$/.test(a))) {
    if (applet !== "busybox") await fs.symlink("busybox", path.join(bin, applet)).catch(() => {});
  }
  await fs.writeFile(path.join(bin, "bash"), '#!/bin/sh\nexec /bin/sh "$@"\n', { mode: 0o755 });
  await fs.mkdir(path.join(root, "etc"), { recursive: true });
  await fs.writeFile(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  await fs.writeFile(path.join(root, "etc", "group"), "root:x:0:\n");
  await fs.mkdir(path.join(root, "tmp"), { mode: 0o1777 });
  await fs.chmod(path.join(root, "tmp"), 0o1777);
}

/** Starts a new OCI layout at `layout` with an empty image `layout:tag`; returns `layout:tag`. */
async function newImage(layout, tag) {
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", `${layout}:${tag}`]);
  return `${layout}:${tag}`;
}

/**
 * Adds the directory `dir` as a new top layer of `image` (`layout:tag`), or
 * of a copy tagged `tag` (then `image` keeps its layers); the layer is
 * gzip-compressed, its owners root.
 */
async function addLayer(image, dir, tag) {
  const tar = `${dir}.tar`;
  await run("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", dir, "-cf", tar, "."]);
  await run("umoci", ["raw", "add-layer", "--image", image, ...(tag ? ["--tag", tag] : []), tar], {
    maxBuffer: 16 * 2 ** 20,
  });
  await fs.rm(tar);
}

/** Sets `Env` entries (`NAME=value`) in the config of `image` (`layout:tag`). */
async function setEnv(image, env) {
  await run("umoci", ["config", "--image", image, ...env.flatMap((e) => ["--config.env", e])]);
}

/**
 * For the demos: starts a registry in a new temporary directory and pushes a
 * two-layer busybox image to it (seconds to make, offline): busybox, then
 * `/etc/image-note`. Resolves with `{ image, close() }`, `image` being the
 * reference a template's `fromImage` takes; `close()` stops the registry and
 * removes its directory.
 */
async function startDemoRegistry() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "sandbox-iac-demo-registry-"));
  try {
    const image = await newImage(path.join(dir, "oci"), "v1");
    await writeBusyboxRoot(path.join(dir, "busybox"));
    await addLayer(image, path.join(dir, "busybox"));
    await fs.mkdir(path.join(dir, "note", "etc"), { recursive: true });
    await fs.writeFile(
      path.join(dir, "note", "etc", "image-note"),
      "busybox from the demo's local registry\n",
    );
    await addLayer(image, path.join(dir, "note"));
    await setEnv(image, ["PATH=/usr/local/bin:/usr/bin:/bin"]);
    const registry = await startRegistry(path.join(dir, "registry"));
    try {
      await pushImage(image, registry.host, "demo/busybox:v1");
    } catch (err) {
      await registry.close();
      throw err;
    }
    return {
      image: `${registry.host}/demo/busybox:v1`,
      close: async () => {
        await registry.close();
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

module.exports = {
  startDemoRegistry,
  startRegistry,
  hasImage,
  pushImage,
  writeBusyboxRoot,
  newImage,
  addLayer,
  setEnv,
};
