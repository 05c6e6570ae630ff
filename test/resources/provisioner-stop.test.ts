/**
 * Stop means stop for what a Provisioner starts in the user's own sandbox, at
 * any moment of it: stopped while its setup command or its archive's `tar`
 * is being started, or once it runs, the process is killed (core/stop.ts),
 * not left running under a pid the provider never learned. Called directly
 * against the real local service, so the stop can land anywhere between the
 * start request and its answer.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { SandboxClient } from "../../src/client/sandbox";
import { SandboxIacError } from "../../src/errors";
import { provisionerLifecycle, type ProvisionerArgs } from "../../src/resources/provisioner";
import { eventually } from "../support/eventually";
import { provisionerFixture } from "./support";

jest.setTimeout(180_000);

const fx = provisionerFixture("prov-stop-");

/** Stops after 0 to 14 ms from the moment the process is announced, i.e. about to be started. */
const DELAYS_MS = Array.from({ length: 15 }, (_, i) => i);

/** How many processes of `sandbox` have a command line starting with `prefix`, read from /proc. */
async function processesLike(sandbox: SandboxClient, prefix: string): Promise<number> {
  const run = await sandbox.run(
    `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done 2>/dev/null | grep -c '^${prefix}' || true`,
  );
  return Number(run.stdout.trim());
}

/**
 * Creates a Provisioner from `raw` in `sandbox` once per delay, stopping it
 * that long after the log line starting with `announced`; returns each run's
 * error and log, and how many processes like `prefix` were left once settled.
 */
async function stopEachDelay(
  sandbox: SandboxClient,
  raw: Record<string, unknown>,
  announced: string,
  prefix: string,
): Promise<{ delayMs: number; err: unknown; lines: string[]; left: number }[]> {
  const checked = provisionerLifecycle.check({ sandboxID: sandbox.sandboxID, ...raw });
  expect(checked.failures).toEqual([]);
  const inputs = checked.inputs as ProvisionerArgs;
  const runs = [];
  for (const delayMs of DELAYS_MS) {
    const stop = new AbortController();
    const { ctx, lines } = fx.context((line) => {
      if (line.startsWith(announced))
        setTimeout(() => stop.abort(new Error("stopped by the test")), delayMs);
    });
    const err = await provisionerLifecycle.create(inputs, { ...ctx, signal: stop.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const left = await eventually(async () => (await processesLike(sandbox, prefix)) === 0).then(
      () => 0,
      () => processesLike(sandbox, prefix),
    );
    runs.push({ delayMs, err, lines, left });
  }
  return runs;
}

describe("a stopped Provisioner in the user's own sandbox", () => {
  it("kills its setup command wherever the stop lands in the command's start", async () => {
    // GIVEN the user's own sandbox and a Provisioner whose one command takes long in it
    const sandbox = await fx.ownSandbox();
    // WHEN it is stopped 0 to 14 ms after the command was announced
    const runs = await stopEachDelay(
      sandbox,
      { commands: [{ run: "sleep 300" }] },
      "[1/1] $ sleep 300",
      "sleep 300 ",
    );
    // THEN each run fails as stopped, naming the command, and no `sleep 300` is left running
    for (const { delayMs, err, lines, left } of runs) {
      expect({ delayMs, canceled: SandboxIacError.hasCode(err, "canceled") }).toEqual({
        delayMs,
        canceled: true,
      });
      expect((err as Error).message).toContain(
        `stopped while command "sleep 300" ran in sandbox ${sandbox.sandboxID}`,
      );
      expect(lines.some((l) => l.startsWith('stopped: kill command "sleep 300"'))).toBe(true);
      expect({ delayMs, left }).toEqual({ delayMs, left: 0 });
    }
    // AND the sandbox, which is the user's, still runs
    expect((await fx.control.getSandbox(sandbox.sandboxID)).state).toBe("running");
  });

  it("kills its archive's tar wherever the stop lands in tar's start", async () => {
    // GIVEN the user's own sandbox and a Provisioner of enough small files to go as one archive
    const sandbox = await fx.ownSandbox();
    const tree = path.join(fx.work, "many");
    mkdirSync(tree, { recursive: true });
    for (let i = 0; i < 2000; i++) writeFileSync(path.join(tree, `f${i}.txt`), `file ${i}\n`);
    // WHEN it is stopped 0 to 14 ms after the archive was announced
    const runs = await stopEachDelay(
      sandbox,
      { files: [{ source: "many", destination: "/home/user/many" }] },
      "uploading ",
      "tar -x ",
    );
    // THEN each run fails as stopped and no `tar` is left waiting for the rest of its archive
    for (const { delayMs, err, left } of runs) {
      expect({ delayMs, canceled: SandboxIacError.hasCode(err, "canceled") }).toEqual({
        delayMs,
        canceled: true,
      });
      expect({ delayMs, left }).toEqual({ delayMs, left: 0 });
    }
    expect((await fx.control.getSandbox(sandbox.sandboxID)).state).toBe("running");
  });
});
