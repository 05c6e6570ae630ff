/**
 * The fixture of the typed sandbox client e2e tests: the REAL local service
 * with one secure sandbox created through the control API, a client holding
 * its access token, and a scratch directory on the host.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import {
  createSandboxClient,
  type ProcessEvent,
  type SandboxClient,
} from "../../src/client/sandbox";
import { createSandbox } from "../local/support";
import { startService, type TestService } from "../support/service";

/** A running service, its secure sandbox and a client for it. */
export interface SandboxClientFixture {
  svc: TestService;
  /** A host directory for files to upload and download. */
  workDir: string;
  sandboxID: string;
  /** The sandbox's envd access token. */
  token: string;
  client: SandboxClient;
  /** Closes the service and deletes the data and work directories. */
  close(): Promise<void>;
}

/** Starts the service and creates the secure sandbox; call `close()` in `afterAll`. */
async function startSandboxClientFixture(): Promise<SandboxClientFixture> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-client-e2e-"));
  const svc = await startService();
  const close = async (): Promise<void> => {
    await svc.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const sbx = await createSandbox(svc, { secure: true });
    const sandboxID = sbx.sandboxID;
    if (!sbx.envdAccessToken) throw new Error("a secure sandbox must come with an envdAccessToken");
    const token = sbx.envdAccessToken;
    const client = createSandboxClient({
      sandboxID,
      accessToken: token,
      config: resolveConfig({
        apiUrl: svc.apiUrl,
        sandboxUrl: svc.sandboxUrl,
        apiKey: svc.apiKey,
        env: {},
      }),
    });
    return { svc, workDir, sandboxID, token, client, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Registers the hooks of a test file: starts the fixture before the tests,
 * hands it to `use` (which picks the fields it needs) and closes it afterwards.
 */
export function useSandboxClientFixture(use: (fx: SandboxClientFixture) => void): void {
  let fx: SandboxClientFixture | undefined;
  beforeAll(async () => {
    fx = await startSandboxClientFixture();
    use(fx);
  });
  afterAll(async () => {
    await fx?.close();
  });
}

/** Drains a process's events: its output, its end event and the event types in order. */
export async function collect(
  events: AsyncIterable<ProcessEvent>,
): Promise<{ out: string; end: ProcessEvent | undefined; types: string[] }> {
  let out = "";
  let end: ProcessEvent | undefined;
  const types: string[] = [];
  for await (const e of events) {
    types.push(e.type);
    if (e.type === "end") end = e;
    else out += Buffer.from(e.data).toString("utf8");
  }
  return { out, end, types };
}

/** The SandboxIacError `p` rejects with; throws when it resolves or fails otherwise. */
export async function failureOf(p: Promise<unknown>): Promise<SandboxIacError> {
  try {
    await p;
  } catch (err) {
    if (SandboxIacError.is(err)) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}
