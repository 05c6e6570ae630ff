/**
 * Starting the local service for a conformance file and the connection options
 * every SDK call gets (passed explicitly: no global environment is patched).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { startLocalService } from "../../src/local";

/** What the SDK needs to reach the local service. */
interface ConnectionOptions {
  apiKey: string;
  apiUrl: string;
  sandboxUrl: string;
}

/** A running local service plus its cleanup. */
export interface ServiceFixture {
  opts: ConnectionOptions;
  close(): Promise<void>;
}

/** Starts a local service on a free port with a fresh data dir. */
export async function startService(): Promise<ServiceFixture> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "sbx-conformance-"));
  const service = await startLocalService({ port: 0, dataDir });
  return {
    opts: { apiKey: service.apiKey, apiUrl: service.apiUrl, sandboxUrl: service.sandboxUrl },
    async close() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` until it returns true, up to `timeoutMs`. */
export async function eventually(
  probe: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await sleep(100);
  }
  return probe();
}
