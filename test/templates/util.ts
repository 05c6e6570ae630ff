/**
 * Helpers for the template tests (the service comes from `test/support/service.ts`):
 * a control-API caller, the official SDK run in a child process, and waiting
 * for a build to finish.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { eventually } from "../support/eventually";
import { call as callService, type CallOptions } from "../local/support";
import type { Endpoint } from "../support/service";

/** Parsed JSON of an answer: its shape is what the tests' expect() calls check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions, not types, check answers
export type Json = any;

/** A JSON answer. */
export interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

/** {@link callService} with the answer's body typed loosely for the template tests' assertions. */
export async function call(
  svc: Endpoint,
  method: string,
  route: string,
  body?: unknown,
  opts: CallOptions = {},
): Promise<Answer> {
  return callService(svc, method, route, body, opts);
}

/** Runs an action of fixtures/sdk-template.js (the official SDK) against `svc`. */
export function sdk(svc: Endpoint, action: string, ...args: string[]): Promise<Json> {
  const script = path.join(__dirname, "fixtures", "sdk-template.js");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    E2B_API_URL: svc.apiUrl,
    E2B_SANDBOX_URL: svc.sandboxUrl,
    E2B_API_KEY: svc.apiKey,
  };
  delete env.E2B_DEBUG;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [script, action, ...args],
      { env, timeout: 300_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const line = stdout.trim().split("\n").pop() ?? "";
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(
            new Error(
              `sdk ${action} printed no result (${err?.message ?? "exit 0"}): ${stdout}\n${stderr}`,
            ),
          );
        }
      },
    );
  });
}

/** Polls a build's status until it is `ready` or `error`; returns the last status and every log entry. */
export async function waitForBuild(
  svc: Endpoint,
  templateID: string,
  buildID: string,
): Promise<{ status: Json; logs: Json[] }> {
  const logs: Json[] = [];
  const status = await eventually(
    async () => {
      const res = await call(
        svc,
        "GET",
        `/templates/${templateID}/builds/${buildID}/status?logsOffset=${logs.length}`,
      );
      if (res.status !== 200)
        throw new Error(`status answered ${res.status}: ${JSON.stringify(res.body)}`);
      logs.push(...res.body.logEntries);
      return (res.body.status === "ready" || res.body.status === "error") && res.body;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
  return { status, logs };
}
