/**
 * Stop means stop for a setup command, at any moment of it: a Provisioner
 * stopped while its command is being started, or once it runs, kills that
 * command in the sandbox it works in (core/stop.ts), and says so. Called
 * directly against the real local service, so the stop can land anywhere
 * between the start request and its answer.
 */
import { SandboxIacError } from "../../src/errors";
import { provisionerLifecycle, type ProvisionerArgs } from "../../src/resources/provisioner";
import { eventually } from "../support/eventually";
import { provisionerFixture } from "./support";

jest.setTimeout(180_000);

const fx = provisionerFixture("prov-command-stop-");

/** Stops after 0 to 14 ms from the moment the command is logged, i.e. about to be started. */
const DELAYS_MS = Array.from({ length: 15 }, (_, i) => i);

describe("a stopped Provisioner's setup command", () => {
  it("is killed in the sandbox wherever the stop lands in its start", async () => {
    // GIVEN the user's own sandbox and a Provisioner whose one command takes long in it
    const sandbox = await fx.ownSandbox();
    const sleepers = async () =>
      Number(
        (
          await sandbox.run(
            `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done 2>/dev/null | grep -c '^sleep 300 ' || true`,
          )
        ).stdout.trim(),
      );
    const checked = provisionerLifecycle.check({
      sandboxID: sandbox.sandboxID,
      commands: [{ run: "sleep 300" }],
    });
    expect(checked.failures).toEqual([]);
    const inputs = checked.inputs as ProvisionerArgs;
    for (const delayMs of DELAYS_MS) {
      // WHEN the stop lands `delayMs` after the command was announced
      const stop = new AbortController();
      const { ctx, lines } = fx.context((line) => {
        if (line.startsWith("[1/1] $ sleep 300"))
          setTimeout(() => stop.abort(new Error("stopped by the test")), delayMs);
      });
      const err = await provisionerLifecycle.create(inputs, { ...ctx, signal: stop.signal }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // THEN the run fails as stopped, naming the command, and no `sleep 300` is left running
      expect(SandboxIacError.hasCode(err, "canceled")).toBe(true);
      expect((err as Error).message).toContain(
        `stopped while command "sleep 300" ran in sandbox ${sandbox.sandboxID}`,
      );
      expect(lines.some((l) => l.startsWith('stopped: kill command "sleep 300"'))).toBe(true);
      const left = await eventually(async () => (await sleepers()) === 0).then(
        () => 0,
        () => sleepers(),
      );
      expect({ delayMs, left }).toEqual({ delayMs, left: 0 });
    }
    // AND the sandbox, which is the user's, still runs
    expect((await fx.control.getSandbox(sandbox.sandboxID)).state).toBe("running");
  });
});
