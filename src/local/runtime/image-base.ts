/**
 * E2B's conventions over a container image, as one more layer on top of the
 * image's layers (E2B's builder adds the same to every template built from an
 * image): user `user` (uid/gid 1000, home `/home/user`), the `sudo` relay to
 * the agent, `/etc/hostname`, `/etc/hosts` and `/etc/resolv.conf`, and the
 * mount points of the agent, its libraries and its socket. One such layer
 * exists per image (its id is derived from the image's layer ids), shared by
 * every template built from that image.
 *
 * The image's `/etc/passwd`, `group` and `shadow` are read from the layers
 * (topmost first, honouring whiteouts) without ever
 * following a symlink the image holds: image content is not the service's.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { AGENT_MOUNT_DIR } from "../../wire/sandbox-paths";
import { writeNetworkFiles, writeText } from "./base-layer";
import { LAYER_ROOT, LAYER_USR, LAYERS_DIR, SANDBOX_USER } from "./constants";
import { AGENT_LIB_IN_SANDBOX } from "./agent-libs";
import { PARTIAL_LAYER_PREFIX } from "./layer-copy";
import { layerExists } from "./layers";
import { layerPaths } from "./paths";
import { writeSudoShim } from "./sudo-shim";

/** Bump when the layer's content changes, so images get a new one. */
const RECIPE_VERSION = "2";
/** Prefix of the ids of these layers. */
const IMAGE_BASE_PREFIX = "e2b";

/** Directories the layer holds, with modes (owned by root unless the user's home). */
const DIRS: ReadonlyArray<[string, number]> = [
  ["etc", 0o755],
  ["home", 0o755],
  [SANDBOX_USER.home.slice(1), 0o755],
  ["root", 0o700],
  ["tmp", 0o1777],
  ["run", 0o755],
  ["run/sandbox-iac", 0o755],
  ["proc", 0o555],
  ["dev", 0o755],
  ["sys", 0o555],
  ["usr", 0o755],
  [AGENT_MOUNT_DIR.slice(1), 0o755],
  [`${AGENT_MOUNT_DIR.slice(1)}/agent`, 0o755],
  [AGENT_LIB_IN_SANDBOX.slice(1), 0o755],
];

/**
 * Ensures the conventions layer over `imageLayers` (lowest first) exists and
 * returns its id. `nodeArgv` is how the sudo relay starts the agent's Node.
 */
export async function ensureImageBaseLayer(
  dataDir: string,
  imageLayers: readonly string[],
  nodeArgv: readonly string[],
): Promise<string> {
  const hash = createHash("sha256")
    .update(JSON.stringify([RECIPE_VERSION, imageLayers, nodeArgv]))
    .digest("hex");
  const layerId = `${IMAGE_BASE_PREFIX}${hash.slice(0, 56)}`;
  if (await layerExists(dataDir, layerId)) return layerId;
  const tmp = path.join(
    dataDir,
    LAYERS_DIR,
    `${PARTIAL_LAYER_PREFIX}${layerId}-${randomBytes(4).toString("hex")}`,
  );
  try {
    const root = path.join(tmp, LAYER_ROOT);
    await fs.mkdir(root, { recursive: true, mode: 0o755 });
    for (const [rel, mode] of DIRS) {
      const p = path.join(root, rel);
      await fs.mkdir(p, { recursive: true });
      await fs.chmod(p, mode);
    }
    await fs.chown(path.join(root, SANDBOX_USER.home), SANDBOX_USER.uid, SANDBOX_USER.gid);
    await fs.writeFile(path.join(root, AGENT_MOUNT_DIR, "node"), "");
    await writeAccounts(dataDir, imageLayers, path.join(root, "etc"));
    await writeNetworkFiles(path.join(root, "etc"));
    const usr = path.join(tmp, LAYER_USR);
    await fs.mkdir(usr, { mode: 0o755 });
    // In /usr/bin, where images install sudo and which every image's PATH has (not always /usr/local/bin).
    await writeSudoShim(usr, nodeArgv.join(" "), "bin/sudo");
    try {
      await fs.rename(tmp, layerPaths(dataDir, layerId).dir);
    } catch (err) {
      if (!(await layerExists(dataDir, layerId))) throw err;
      await fs.rm(tmp, { recursive: true, force: true });
    }
  } catch (err) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return layerId;
}

/** The image's account files with `user` (uid/gid 1000) added or replaced. */
async function writeAccounts(
  dataDir: string,
  imageLayers: readonly string[],
  etc: string,
): Promise<void> {
  const u = SANDBOX_USER;
  const read = (name: string) => readImageFile(dataDir, imageLayers, ["etc", name]);
  const lines = (text: string | undefined) =>
    (text ?? "").split("\n").filter((l) => l.trim() !== "" && l.split(":")[0] !== u.name);
  const passwd = lines((await read("passwd")) ?? "root:x:0:0:root:/root:/bin/sh\n");
  passwd.push(`${u.name}:x:${u.uid}:${u.gid}::${u.home}:${u.shell}`);
  await writeText(etc, "passwd", passwd, 0o644);
  const group = lines((await read("group")) ?? "root:x:0:\n");
  group.push(`${u.name}:x:${u.gid}:`);
  await writeText(etc, "group", group, 0o644);
  const shadow = await read("shadow");
  if (shadow !== undefined) {
    const entries = lines(shadow);
    entries.push(`${u.name}:*:19000:0:99999:7:::`);
    await writeText(etc, "shadow", entries, 0o640);
  }
}

/**
 * The content of `rel` as the merged image shows it, or undefined when no
 * layer has it as a regular file. Only real directories are descended and the
 * file is opened with `O_NOFOLLOW`. An opaque directory (an xattr Node cannot
 * read) is looked through: at worst a lower layer's account lines come back.
 */
async function readImageFile(
  dataDir: string,
  imageLayers: readonly string[],
  rel: readonly string[],
): Promise<string | undefined> {
  for (const id of [...imageLayers].reverse()) {
    let dir = layerPaths(dataDir, id).root;
    for (const [i, part] of rel.entries()) {
      const p = path.join(dir, part);
      const st = await fs.lstat(p).catch(() => undefined);
      if (!st) break;
      if (i === rel.length - 1) {
        if (!st.isFile()) return undefined;
        const fh = await fs.open(p, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
        try {
          return await fh.readFile("utf8");
        } finally {
          await fh.close();
        }
      }
      // A whiteout, a file or a symlink where a directory should be: the path ends here.
      if (!st.isDirectory()) return undefined;
      dir = p;
    }
  }
  return undefined;
}
