// The images of bench/images.js, made offline once and kept in a cache
// directory: a ~200 MB two-layer image (busybox, incompressible and
// compressible files; layers assembled with umoci) and a second image sharing
// its base layer.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const reg = require("../scripts/local-registry");

/** Bumped when the images below change, so a cache of older ones is not used. */
const IMAGES_VERSION = "1";
const MiB = 2 ** 20;

/** Writes `count` files of `size` random (incompressible) bytes into `dir`. */
function randomFiles(dir, count, size) {
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    fs.writeFileSync(
      path.join(dir, `r${String(i).padStart(3, "0")}.bin`),
      crypto.randomBytes(size),
    );
  }
}

/** Writes `count` text files of about `size` bytes (gzip takes them to about a seventh) into `dir`. */
function textFiles(dir, count, size) {
  const words = Array.from({ length: 4096 }, () => crypto.randomBytes(4).toString("hex"));
  let seed = 1;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, `d${String(i % 64).padStart(2, "0")}`);
    fs.mkdirSync(sub, { recursive: true });
    const lines = [];
    let n = 0;
    while (n < size) {
      const line = `${i}:${n} ${Array.from({ length: 10 }, () => words[next() % words.length]).join(" ")}\n`;
      lines.push(line);
      n += line.length;
    }
    fs.writeFileSync(path.join(sub, `t${i}.txt`), lines.join(""));
  }
}

/**
 * Makes the images in the directory `cache` (unless there already; the
 * directory is emptied first) and returns their OCI layout, as tags `big` and `other`: `big` is a
 * base layer (busybox, 100 MiB random in 10 files, 50 MB of text in 4,000
 * files) and a top layer (30 MiB random, 20 MB of text in 1,000 files);
 * `other` is the same base with a 5 MiB top layer.
 */
async function makeImages(cache, say) {
  const layout = path.join(cache, "oci");
  const ready = path.join(cache, `images-v${IMAGES_VERSION}`);
  if (fs.existsSync(ready)) return layout;
  say(`making the images under ${cache} (once; kept for the next runs)`);
  fs.rmSync(cache, { recursive: true, force: true });
  const src = path.join(cache, "src");
  const base = path.join(src, "base");
  await reg.writeBusyboxRoot(base);
  randomFiles(path.join(base, "data", "random"), 10, 10 * MiB);
  textFiles(path.join(base, "data", "text"), 4000, 12_500);
  const top = path.join(src, "top");
  randomFiles(path.join(top, "app", "random"), 3, 10 * MiB);
  textFiles(path.join(top, "app", "text"), 1000, 20_000);
  const otherTop = path.join(src, "other");
  randomFiles(path.join(otherTop, "other"), 1, 5 * MiB);
  const image = await reg.newImage(layout, "base");
  await reg.setEnv(image, ["PATH=/usr/local/bin:/usr/bin:/bin"]);
  say("  base layer (umoci gzips it)");
  await reg.addLayer(image, base);
  say("  top layers");
  await reg.addLayer(image, top, "big");
  await reg.addLayer(image, otherTop, "other");
  fs.rmSync(src, { recursive: true, force: true });
  fs.writeFileSync(ready, "");
  return layout;
}

/** The manifest of `layout:tag` in an OCI layout. */
function layoutManifest(layout, tag) {
  const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
  const desc = index.manifests.find(
    (m) => tag === undefined || m.annotations?.["org.opencontainers.image.ref.name"] === tag,
  );
  const blob = (digest) => path.join(layout, "blobs", "sha256", digest.slice("sha256:".length));
  return { manifest: JSON.parse(fs.readFileSync(blob(desc.digest), "utf8")), blob };
}

module.exports = { makeImages, layoutManifest };
