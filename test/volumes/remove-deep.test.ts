/**
 * Removing a tree deeper than the directory levels the service holds open at
 * once (remove.ts moves the deepest directories up and goes on): the whole
 * tree goes, nothing is left behind.
 */
import { Volume } from "e2b";
import { connectionOpts, useService, type Endpoint } from "../support/service";

jest.setTimeout(120_000);

let opts: Endpoint;
useService((svc) => {
  opts = connectionOpts(svc);
});

it("removes a directory 150 levels deep (over twice what is held open), with files at every level", async () => {
  const vol = await Volume.create("deep-vol", opts);
  const c = { apiUrl: opts.apiUrl };
  const levels = Array.from({ length: 150 }, (_, i) => `l${i}`);
  await vol.makeDir(`/${levels.join("/")}`, { ...c, force: true });
  for (const depth of [1, 63, 64, 65, 129, 150])
    await vol.writeFile(`/${levels.slice(0, depth).join("/")}/file-${depth}`, "x", c);
  expect((await vol.list("/", { ...c, depth: 64 })).length).toBeGreaterThan(64);
  await vol.writeFile("/keep.txt", "kept", c);

  await vol.remove("/l0", c);

  expect(await vol.exists("/l0", c)).toBe(false);
  expect((await vol.list("/", c)).map((e) => e.path)).toEqual(["/keep.txt"]);
});
