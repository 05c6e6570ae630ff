/**
 * Waits for the agent to answer `GET /health` with 204 on its Unix socket.
 *
 * @module
 */
import * as http from "node:http";
import { ENVD_ROUTES } from "../../wire/envd";
import { HEALTH_POLL_INTERVAL_MS } from "./constants";

/** Why {@link waitForHealth} gave up. */
export type HealthFailure = "deadline" | "exited";

/**
 * Polls `GET /health` on `socketPath` every few milliseconds. Resolves `true`
 * on a 204; resolves with the reason when the deadline passes or `exited`
 * settles first (the sandbox died, no point in waiting).
 */
export async function waitForHealth(
  socketPath: string,
  timeoutMs: number,
  exited: Promise<void>,
): Promise<true | HealthFailure> {
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (hasExited) return "exited";
    if ((await probe(socketPath)) === 204) return true;
    if (Date.now() >= deadline) return "deadline";
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
