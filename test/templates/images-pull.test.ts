import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { sdk } from "./util";
import { useService, type TestService } from "../support/service";
import {
  makeBusyboxImage,
  makeSingleLayerImage,
  startRegistry,
  withHostBash,
  withLayer,
  type TestRegistry,
} from "../support/registry";

jest.setTimeout(300_000);

let svc: TestService;
useService((s) => (svc = s));

let registry: TestRegistry;
let work: string;
const marker = `zstd-${randomBytes(8).toString("hex")}`;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), "sbx-images-pull-"));
  const image = await makeBusyboxImage(work);
  registry = await startRegistry();
  await registry.push(image, "tests/busy:v1");
  await registry.push(
    await withLayer(image, "v2", { "/etc/three.txt": "three\n" }),
    "tests/busy:v2",
  );
  await registry.push(await makeSingleLayerImage(work, marker), "tests/zstd:v1", { zstd: true });
  await registry.push(await withHostBash(image, "bash"), "tests/busy:bash");
});

afterAll(async () => {
  await registry?.close();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** The layer blobs the registry served since `before` (an index into its GET list). */
function layerGetsSince(before: number, layers: readonly string[]): string[] {
  return registry
    .blobGets()
    .slice(before)
    .filter((d) => layers.includes(d));
}

const short = (digest: string) => digest.slice(0, 19);

describe("pulling a container image for Template.build()", () => {
  it("downloads every layer of an image not pulled before, logging each layer's bytes", async () => {
    const layers = (await registry.layers("tests/busy:v1")).map((l) => l.digest);
    const before = registry.blobGets().length;
    const built = await sdk(
      svc,
      "build-from-image",
      "pull-first",
      `${registry.host}/tests/busy:v1`,
    );
    expect(built).toMatchObject({ ok: true });
    expect(layerGetsSince(before, layers).sort()).toEqual([...layers].sort());
    expect(built.logs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`^Downloading layer 1/2 ${short(layers[0])} \\(\\d+\\.\\d MB\\)$`),
        ),
        expect.stringMatching(
          new RegExp(`^Downloaded layer 1/2 ${short(layers[0])} \\(\\d+\\.\\d MB\\)$`),
        ),
        expect.stringMatching(
          new RegExp(`^Downloaded layer 2/2 ${short(layers[1])} \\(\\d+\\.\\d MB\\)$`),
        ),
        expect.stringMatching(/: 2 layers, \d+\.\d MB; downloaded 2 \(\d+\.\d MB\) in \d+\.\d s$/),
      ]),
    );
  });

  it("downloads no layer of an image whose layers are unpacked already", async () => {
    const layers = (await registry.layers("tests/busy:v1")).map((l) => l.digest);
    const before = registry.blobGets().length;
    const built = await sdk(
      svc,
      "build-from-image",
      "pull-again",
      `${registry.host}/tests/busy:v1`,
    );
    expect(built).toMatchObject({ ok: true });
    expect(layerGetsSince(before, layers)).toEqual([]);
    expect(built.logs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^Layer 1/2 ${short(layers[0])} \\(\\d+\\.\\d MB\\): already unpacked, not downloaded$`,
          ),
        ),
        expect.stringMatching(/: 2 layers, \d+\.\d MB; downloaded 0 \(0\.0 MB\) in /),
      ]),
    );
  });

  it("downloads only the new layer of an image sharing its lower layers with one pulled before", async () => {
    const layers = (await registry.layers("tests/busy:v2")).map((l) => l.digest);
    const before = registry.blobGets().length;
    const built = await sdk(
      svc,
      "build-from-image",
      "pull-shared",
      `${registry.host}/tests/busy:v2`,
      "",
      "",
      "cat /etc/one.txt /etc/three.txt",
    );
    expect(built).toMatchObject({ ok: true });
    expect(layers).toHaveLength(3);
    expect(layerGetsSince(before, layers)).toEqual([layers[2]]);
    expect(built.logs).toEqual(expect.arrayContaining(["one", "three"]));
  });

  it("builds from an image whose layer is zstd-compressed", async () => {
    expect(await registry.layers("tests/zstd:v1")).toEqual([
      expect.objectContaining({ mediaType: "application/vnd.oci.image.layer.v1.tar+zstd" }),
    ]);
    const built = await sdk(
      svc,
      "build-from-image",
      "pull-zstd",
      `${registry.host}/tests/zstd:v1`,
      "",
      "",
      "cat /etc/marker",
    );
    expect(built).toMatchObject({ ok: true });
    expect(built.logs).toContain(marker);
  });
});

describe("Template.fromDockerfile()", () => {
  it("builds FROM a busybox-based image with ARG, ENV, WORKDIR, COPY, RUN and USER (a new user too), and a sandbox from it sees their results", async () => {
    const dockerfile = [
      `FROM ${registry.host}/tests/busy:bash`,
      "ARG FLAVOR=plain",
      "ENV APP_MODE=dockerfile",
      "WORKDIR /srv/app",
      "COPY hello.txt notes/",
      'RUN echo "mode=$APP_MODE flavor=$FLAVOR" > built.txt && id -un > whoami.txt',
      "USER app",
      "RUN id -un > /tmp/app-was-here",
      "USER user",
      "WORKDIR /home/user/work",
      "RUN echo made-by-user > mine.txt",
    ].join("\n");
    const built = await sdk(svc, "build-dockerfile", "from-dockerfile", dockerfile);
    expect(built).toEqual(expect.objectContaining({ ok: true }));
    const ran = await sdk(
      svc,
      "run-in",
      "from-dockerfile",
      'id -un; pwd; echo "$APP_MODE"; cat /srv/app/built.txt /srv/app/whoami.txt /srv/app/notes/hello.txt mine.txt /tmp/app-was-here; stat -c %U mine.txt',
    );
    expect(ran).toMatchObject({ ok: true });
    expect(ran.stdout).toBe(
      [
        "user",
        "/home/user/work",
        "dockerfile",
        "mode=dockerfile flavor=plain",
        "root",
        "hello from copy",
        "made-by-user",
        "app",
        "user",
        "",
      ].join("\n"),
    );
  });
});
