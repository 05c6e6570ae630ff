/**
 * A build cancelled (`DELETE /templates/{id}/builds/{buildID}`, what a
 * stopped Terraform or Pulumi run sends) at any moment of its life ends as
 * cancelled: right as it starts (before it holds a slot or a sandbox), while
 * a step runs, and while a step's layer is being captured (its sandbox
 * frozen). Each time its build sandbox is gone and it leaves no layer behind.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { TEMPLATES_DIR } from "../../src/local/control/templates/constants";
import { STEP_CACHE_FILE } from "../../src/local/control/templates/step-cache";
import { LAYERS_DIR, SANDBOXES_DIR } from "../../src/local/runtime/constants";
import { PARTIAL_LAYER_PREFIX } from "../../src/local/runtime/layer-copy";
import { eventually } from "../support/eventually";
import { useService, type TestService } from "../support/service";
import { call, waitForBuild, type Json } from "./util";

jest.setTimeout(240_000);

let svc: TestService;
useService((s) => (svc = s));

const CANCELLED = "the build was cancelled: the client cancelled it";

const entries = (dir: string) => readdirSync(path.join(svc.dataDir, dir)).sort();
/** Stored layers, finished ones only (a capture in progress is a `.tmp-` directory). */
const layers = () => entries(LAYERS_DIR).filter((n) => !n.startsWith(PARTIAL_LAYER_PREFIX));
/** Build sandboxes on disk (their IDs start with `b`). */
const buildSandboxes = () => entries(SANDBOXES_DIR).filter((n) => n.startsWith("b"));

/** A new build of a new template `name`, not started yet. */
async function newBuild(name: string): Promise<{ templateID: string; buildID: string }> {
  const created = await call(svc, "POST", "/v3/templates", { name });
  expect(created.status).toBe(202);
  return created.body;
}

function start(ids: { templateID: string; buildID: string }, steps: unknown[]) {
  return call(svc, "POST", `/v2/templates/${ids.templateID}/builds/${ids.buildID}`, {
    fromTemplate: "base",
    steps,
  });
}

function status(ids: { templateID: string; buildID: string }): Promise<Json> {
  return call(svc, "GET", `/templates/${ids.templateID}/builds/${ids.buildID}/status`).then(
    (r) => r.body,
  );
}

function cancel(ids: { templateID: string; buildID: string }) {
  return call(svc, "DELETE", `/templates/${ids.templateID}/builds/${ids.buildID}`);
}

/**
 * THEN: the build ended cancelled, its sandbox destroyed, no capture half-made,
 * and every layer that was not there before it is a finished step's, named by
 * the step cache (none when `stepsFinished` is false).
 */
async function expectCancelledLeavingNothing(
  ids: { templateID: string; buildID: string },
  layersBefore: string[],
  stepsFinished = false,
): Promise<void> {
  const { status: ended } = await waitForBuild(svc, ids.templateID, ids.buildID);
  expect(ended).toMatchObject({ status: "error", reason: { message: CANCELLED } });
  await eventually(() => buildSandboxes().length === 0, { timeoutMs: 60_000 });
  await eventually(() => entries(LAYERS_DIR).every((n) => !n.startsWith(PARTIAL_LAYER_PREFIX)), {
    timeoutMs: 60_000,
  });
  // The build's clean-up (its sandbox destroyed, an interrupted capture deleted) goes on after it ended.
  const cacheFile = path.join(svc.dataDir, TEMPLATES_DIR, STEP_CACHE_FILE);
  const cached = () => (existsSync(cacheFile) ? readFileSync(cacheFile, "utf8") : "");
  const leftOver = () =>
    layers().filter((l) => !layersBefore.includes(l) && !(stepsFinished && cached().includes(l)));
  await eventually(() => leftOver().length === 0, { timeoutMs: 60_000 }).catch(() => undefined);
  expect(leftOver()).toEqual([]);
}

describe("DELETE /templates/{templateID}/builds/{buildID}", () => {
  it("cancels a build the moment it shows as building, before it has a sandbox", async () => {
    // GIVEN a build whose start is under way
    const ids = await newBuild("cancel-at-start");
    const before = layers();
    const started = start(ids, [{ type: "RUN", args: ["sleep 60"] }]);
    // WHEN the client cancels it as soon as it reads `building` (the start may not have answered yet)
    await eventually(async () => (await status(ids)).status === "building", { intervalMs: 1 });
    const cancelled = await cancel(ids);
    // THEN the start was accepted, and the build ended cancelled, leaving nothing
    expect((await started).status).toBe(202);
    expect(cancelled.status).toBe(204);
    await expectCancelledLeavingNothing(ids, before);
  });

  it("cancels a build while a step runs, killing the step", async () => {
    // GIVEN a build whose step has started and runs long
    const ids = await newBuild("cancel-mid-step");
    const before = layers();
    expect(
      (await start(ids, [{ type: "RUN", args: ["echo step-running && sleep 60"] }])).status,
    ).toBe(202);
    await eventually(
      async () =>
        (await status(ids)).logEntries.some((e: Json) => e.message === "step-running") as boolean,
      { timeoutMs: 120_000 },
    );
    // WHEN the client cancels it
    expect((await cancel(ids)).status).toBe(204);
    // THEN it ended cancelled, leaving nothing
    await expectCancelledLeavingNothing(ids, before);
  });

  it("cancels a build while a step's layer is captured (its sandbox frozen), keeping no part of it", async () => {
    // GIVEN a build whose step leaves enough bytes that capturing them takes a while
    const ids = await newBuild("cancel-mid-capture");
    const before = layers();
    expect(
      (
        await start(ids, [
          {
            type: "RUN",
            args: ["head -c 134217728 /dev/urandom > /home/user/big.bin"],
          },
          { type: "RUN", args: ["sleep 60"] },
        ])
      ).status,
    ).toBe(202);
    // WHEN the client cancels it while the layer is being copied out
    await eventually(() => entries(LAYERS_DIR).some((n) => n.startsWith(PARTIAL_LAYER_PREFIX)), {
      timeoutMs: 120_000,
      intervalMs: 5,
    });
    expect((await cancel(ids)).status).toBe(204);
    // THEN it ended cancelled, its capture dropped (or, had the capture just ended, kept whole in the step cache)
    await expectCancelledLeavingNothing(ids, before, true);
  });
});
