import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { call, sdk } from "./util";
import { useService, type TestService } from "../support/service";
import {
  BUSYBOX_IMAGE,
  makeBusyboxImage,
  startRegistry,
  withArchitecture,
  type TestRegistry,
} from "../support/registry";

jest.setTimeout(300_000);

const AUTH = { username: "tester", password: "pw-Zq81-never-logged" };
const WRONG_PASSWORD = "wrong-Xy77-never-logged";

// Docker Hub is rewritten to a closed loopback port for this worker's skopeo runs, so
// "e2bdev/base" is unreachable here whether or not the machine is online.
const work = (async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "sbx-images-"));
  const conf = path.join(dir, "registries.conf");
  await fs.writeFile(conf, '[[registry]]\nprefix = "docker.io"\nlocation = "127.0.0.1:9"\n');
  process.env["CONTAINERS_REGISTRIES_CONF"] = conf;
  return dir;
})();

const serviceLog: string[] = [];
let svc: TestService;
useService((s) => (svc = s), { log: (line) => serviceLog.push(line) });

let open: TestRegistry;
let locked: TestRegistry;

beforeAll(async () => {
  const dir = await work;
  const image = await makeBusyboxImage(dir);
  open = await startRegistry();
  locked = await startRegistry(AUTH);
  await open.push(image, "tests/busy:v1");
  await open.push(await withArchitecture(image, "arm64"), "tests/busy-arm:v1");
  await locked.push(image, "private/busy:v1");
});

afterAll(async () => {
  await open?.close();
  await locked?.close();
  await fs.rm(await work, { recursive: true, force: true });
});

/** Entries of the layer store that a crash or a failed build could leave half-made. */
async function partialLayers(): Promise<string[]> {
  const names = await fs.readdir(path.join(svc.dataDir, "layers"));
  return names.filter((n) => n.startsWith(".tmp-"));
}

/** Everything a user or operator can read about template `name`'s builds. */
async function everythingShown(name: string): Promise<string> {
  const tpl = await call(svc, "GET", `/templates/${name}`);
  const out = [JSON.stringify(tpl.body)];
  for (const b of tpl.body.builds ?? []) {
    const st = await call(
      svc,
      "GET",
      `/templates/${tpl.body.templateID}/builds/${b.buildID}/status`,
    );
    const logs = await call(
      svc,
      "GET",
      `/templates/${tpl.body.templateID}/builds/${b.buildID}/logs`,
    );
    out.push(JSON.stringify(st.body), JSON.stringify(logs.body));
  }
  return out.join("\n") + serviceLog.join("\n");
}

describe("Template.build() from a container image", () => {
  it("builds on both layers of the image, without the directory the second deletes, with the image's Env in RUN steps", async () => {
    const built = await sdk(
      svc,
      "build-from-image",
      "busy-app",
      `${open.host}/tests/busy:v1`,
      "",
      "",
      `${BUSYBOX_IMAGE.hello}; echo "greet=$IMAGE_GREETING"; cat ${BUSYBOX_IMAGE.firstLayerFile} ${BUSYBOX_IMAGE.secondLayerFile}; ` +
        `ls ${BUSYBOX_IMAGE.opaqueDir}; test -e ${BUSYBOX_IMAGE.deletedDir} && echo deleted-dir-present || echo deleted-dir-absent; ` +
        `echo "runs-as=$(id -un)"; touch /home/user/made-by-build`,
    );
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toEqual(
      expect.arrayContaining([
        BUSYBOX_IMAGE.helloOutput,
        "greet=from-config",
        "one",
        "two",
        "kept.txt",
        "deleted-dir-absent",
        "runs-as=user",
        expect.stringMatching(/^Layer 1\/2 sha256:[0-9a-f]{12} \(\d+\.\d MB\): unpacked$/),
        expect.stringMatching(/^Layer 2\/2 sha256:[0-9a-f]{12} /),
      ]),
    );
    expect(built.logs).not.toContain("old.txt");
  });

  it("starts sandboxes from the image that run commands as user, with the image's PATH, sudo, and none of the host's /usr", async () => {
    const ran = await sdk(
      svc,
      "run-in",
      "busy-app",
      'id -un; echo "$PATH"; hello-from-image; cat /etc/two.txt; ls /home/user; sudo id -u; ' +
        "test -e /usr/bin/python3 && echo host-usr-visible || echo host-usr-hidden",
    );
    expect(ran.stdout).toBe(
      [
        "user",
        BUSYBOX_IMAGE.path,
        BUSYBOX_IMAGE.helloOutput,
        "two",
        "made-by-build",
        "0",
        "host-usr-hidden",
        "",
      ].join("\n"),
    );
  });

  it("unpacks each layer once: a second template from the same image reuses its layers", async () => {
    const built = await sdk(svc, "build-from-image", "busy-again", `${open.host}/tests/busy:v1`);
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Layer 1\/2 .*: already unpacked$/)]),
    );
  });

  it("pulls from a registry behind basic auth with fromImage(ref, { username, password })", async () => {
    const built = await sdk(
      svc,
      "build-from-image",
      "private-app",
      `${locked.host}/private/busy:v1`,
      AUTH.username,
      AUTH.password,
      "cat /etc/two.txt",
    );
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toContain("two");
    expect(await everythingShown("private-app")).not.toContain(AUTH.password);
  });

  it("fails when the registry password is wrong, naming authentication and never the password", async () => {
    const built = await sdk(
      svc,
      "build-from-image",
      "wrong-pw-app",
      `${locked.host}/private/busy:v1`,
      AUTH.username,
      WRONG_PASSWORD,
    );
    expect(built.ok).toBe(false);
    expect(built.error).toContain(`authentication to registry ${locked.host} failed`);
    expect(JSON.stringify(built)).not.toContain(WRONG_PASSWORD);
    expect(await everythingShown("wrong-pw-app")).not.toContain(WRONG_PASSWORD);
    expect(await partialLayers()).toEqual([]);
  });

  it("fails when the image does not exist, saying so", async () => {
    // "401" in the name: digits of the reference (the registry's random port was one) once
    // read as an HTTP 401, and a missing image was reported as an authentication failure.
    const missing = `${open.host}/tests/nope-401:v1`;
    const built = await sdk(svc, "build-from-image", "missing-app", missing);
    expect(built.ok).toBe(false);
    expect(built.error).toContain(`image ${missing} does not exist in registry ${open.host}`);
    expect(await partialLayers()).toEqual([]);
  });

  it("fails when an image is refused without credentials, saying it does not exist or is private", async () => {
    const built = await sdk(svc, "build-from-image", "anon-app", `${locked.host}/private/busy:v1`);
    expect(built.ok).toBe(false);
    expect(built.error).toContain(
      `registry ${locked.host} refused image ${locked.host}/private/busy:v1, and no credentials were given with fromImage()`,
    );
    expect(built.error).toContain("the image does not exist, or it is private");
    expect(await partialLayers()).toEqual([]);
  });

  it("fails when the registry is down, saying it cannot be reached", async () => {
    const built = await sdk(svc, "build-from-image", "down-app", "127.0.0.1:9/tests/busy:v1");
    expect(built.ok).toBe(false);
    expect(built.error).toContain("registry 127.0.0.1:9 cannot be reached");
    expect(await partialLayers()).toEqual([]);
  });

  it("fails when the image is for another architecture only, naming the one the service runs", async () => {
    const built = await sdk(svc, "build-from-image", "arm-app", `${open.host}/tests/busy-arm:v1`);
    expect(built.ok).toBe(false);
    expect(built.error).toContain(
      `image ${open.host}/tests/busy-arm:v1 is for linux/arm64: the local service runs linux/amd64 images only`,
    );
    expect(await partialLayers()).toEqual([]);
  });

  it("fails with a 400 for AWS registry credentials, naming what the local service supports", async () => {
    const built = await sdk(svc, "build-aws", "aws-app");
    expect(built.ok).toBe(false);
    expect(built.error).toContain("body.fromImageRegistry.type");
    expect(built.error).toContain('it supports type "registry"');
    expect(built.error).not.toContain("aws-secret-never-shown");
  });

  it("builds fromBaseImage() on the built-in base when E2B's registry cannot be reached, saying so", async () => {
    const built = await sdk(svc, "build-base-image", "offline-base-app");
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toEqual(
      expect.arrayContaining([
        expect.stringContaining("building on the built-in base template instead"),
        "built-on-user",
      ]),
    );
  });
});
