/**
 * The stand-in "internet" itself: a test run killed before its stand-in's
 * `close()` must not break the next run's network tests.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import {
  addStandInLink,
  standInNames,
  startStandInInternet,
  STAND_IN_WAIT_MS,
} from "./stand-in-internet";

jest.setTimeout(60_000);

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: "pipe" }).toString();

/** A pid no process has: one that has just exited. */
function deadPid(): number {
  const done = spawnSync("true");
  if (!done.pid) throw new Error("could not run true");
  return done.pid;
}

it(
  "answers after a killed run left its namespace and link holding the same addresses",
  async () => {
    // GIVEN what a run killed mid-way leaves (made once the stand-ins' lock
    // is held, so no live stand-in of another test file meets it): its
    // namespace and its link, with the stand-in's addresses and no server
    const { ns, veth } = standInNames(deadPid());
    const leftovers = () => addStandInLink(ns, veth);
    try {
      // WHEN the next run starts its stand-in
      const inet = await startStandInInternet({ onLocked: leftovers });
      try {
        // THEN the leftovers are gone and the stand-in answers
        expect(fs.existsSync(`/run/netns/${ns}`)).toBe(false);
        expect(ip("-br", "link")).not.toContain(`${veth}@`);
        const res = await fetch(`${inet.url}/after-a-killed-run`, {
          signal: AbortSignal.timeout(10_000),
        });
        expect(await res.text()).toBe("internet /after-a-killed-run");
      } finally {
        await inet.close();
      }
    } finally {
      for (const cmd of [
        ["link", "del", veth],
        ["netns", "del", ns],
      ])
        spawnSync("ip", cmd, { stdio: "ignore" });
    }
  },
  STAND_IN_WAIT_MS + 60_000,
);
