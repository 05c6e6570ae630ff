/**
 * Shared set-up of the Provisioner tests that call the lifecycle directly:
 * the local service, a control client, a work directory for local trees, and
 * the sandboxes a test made itself, killed after each test whatever happened.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import { resolveConfig, type ResolvedConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import type { ResourceContext } from "../../src/resources/core/lifecycle";
import { startService, type TestService } from "../support/service";

/** What {@link provisionerFixture} gives a test file; the fields are set by `beforeAll`. */
export interface ProvisionerFixture {
  service: TestService;
  control: ControlClient;
  /** The directory local trees are written under, and the lifecycle's `baseDir`. */
  work: string;
  /** Sandboxes a test created itself; killed after each test. */
  ownSandboxes: string[];
  config: () => ResolvedConfig;
  /** A context whose log lines are collected; `onLine` sees each as it arrives. */
  context: (onLine?: (line: string) => void) => { ctx: ResourceContext; lines: string[] };
  /** A running secure sandbox created by the test, with its client. */
  ownSandbox: () => Promise<SandboxClient>;
  /** A client of a sandbox the Provisioner created (the token comes from the control API). */
  clientOf: (sandboxID: string) => Promise<SandboxClient>;
}

/**
 * Registers the hooks of a Provisioner test file. With `ownCacheDir`, the
 * hash cache goes to the work directory for the file's duration.
 */
export function provisionerFixture(
  prefix: string,
  options: { ownCacheDir?: boolean | undefined } = {},
): ProvisionerFixture {
  const fx: ProvisionerFixture = {
    service: undefined as unknown as TestService,
    control: undefined as unknown as ControlClient,
    work: "",
    ownSandboxes: [],
    config: () =>
      resolveConfig({
        apiUrl: fx.service.apiUrl,
        apiKey: fx.service.apiKey,
        sandboxUrl: fx.service.sandboxUrl,
        env: {},
      }),
    context: (onLine) => {
      const lines: string[] = [];
      const log = (line: string) => {
        lines.push(line);
        onLine?.(line);
      };
      return { lines, ctx: { config: fx.config(), baseDir: fx.work, log } };
    },
    ownSandbox: async () => {
      const created = await fx.control.createSandbox({
        templateID: "base",
        timeout: 600,
        secure: true,
      });
      fx.ownSandboxes.push(created.sandboxID);
      return createSandboxClient({
        sandboxID: created.sandboxID,
        accessToken: created.envdAccessToken ?? undefined,
        config: fx.config(),
      });
    },
    clientOf: async (sandboxID) => {
      const detail = await fx.control.getSandbox(sandboxID);
      return createSandboxClient({
        sandboxID,
        accessToken: detail.envdAccessToken ?? undefined,
        config: fx.config(),
      });
    },
  };
  beforeAll(async () => {
    fx.work = mkdtempSync(path.join(tmpdir(), prefix));
    if (options.ownCacheDir) process.env.SANDBOX_IAC_CACHE_DIR = path.join(fx.work, "cache");
    fx.service = await startService();
    fx.control = createControlClient({ config: fx.config(), log: () => undefined });
  });
  afterEach(async () => {
    for (const id of fx.ownSandboxes.splice(0)) {
      try {
        await fx.control.killSandbox(id);
      } catch (err) {
        if (!SandboxIacError.hasCode(err, "not_found")) throw err;
      }
    }
  });
  afterAll(async () => {
    if (options.ownCacheDir) delete process.env.SANDBOX_IAC_CACHE_DIR;
    await fx.service?.close();
    if (fx.work) rmSync(fx.work, { recursive: true, force: true });
  });
  return fx;
}
