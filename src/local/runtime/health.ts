/**
 * Waits for the agent to answer `GET /health` with 204 on its Unix socket.
 *
 * @module
 */
import * as http from "node:http";
import { ENVD_ROUTES } from "../../wire/envd";
import { HEALTH_POLL_INTERVAL_MS, START_PROGRESS_SAMPLE_MS } from "./constants";

/** Why {@link waitForHealth} gave up. */
export type HealthFailure = "stalled" | "deadline" | "exited";

/** How long {@link waitForHealth} waits, and how it sees that the start is going on. */
export interface HealthWait {
  /** Gives up when the sandbox has used no CPU for this long. */
  stallMs: number;
  /** Gives up after this long, progress or not. */
  limitMs: number;
  /** Settles when the sandbox's process exited: no point in waiting. */
  exited: Promise<void>;
  /** CPU time the sandbox's processes have used so far, in nanoseconds. */
  cpuUsageNs: () => Promise<number>;
}

/**
 * Polls `GET /health` on `socketPath` every few milliseconds until a 204.
 *
 * A fixed limit failed starts on a busy machine (load 25 on 2 cores made
 * Node's boot take longer than 30 s) while being needlessly long for an agent
 * that hangs. So the wait follows the machine: it lasts as long as the
 * sandbox is alive and still making progress, which is seen as its cgroup's
 * CPU time growing (a booting agent keeps using CPU, however slowly it gets
 * it; one that is stuck does not), up to an overall limit that only bounds
 * how long a start that spins without ever answering holds its resources.
 */
export async function waitForHealth(
  socketPath: string,
  wait: HealthWait,
): Promise<true | HealthFailure> {
  let hasExited = false;
  void wait.exited.then(() => (hasExited = true));
  const start = Date.now();
  let lastProgress = start;
  let lastCpu = -1;
  let nextSample = start;
  for (;;) {
    if (hasExited) return "exited";
    if ((await probe(socketPath)) === 204) return true;
    const now = Date.now();
    if (now >= nextSample) {
      nextSample = now + START_PROGRESS_SAMPLE_MS;
      const cpu = await wait.cpuUsageNs().catch(() => lastCpu);
      if (cpu > lastCpu) lastProgress = now;
      lastCpu = cpu;
    }
    if (now - start >= wait.limitMs) return "deadline";
    if (now - lastProgress >= wait.stallMs) return "stalled";
    await new Promise((r) => setTimeout(r, HEALTH_POLL_INTERVAL_MS));
  }
}

/** One `GET /health`; resolves with the status, or 0 when the socket does not answer. */
function probe(socketPath: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { socketPath, path: ENVD_ROUTES.health, method: "GET", agent: false, timeout: 1000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}
