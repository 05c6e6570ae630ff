/**
 * Test helpers for the runtime: a runtime over a fresh temporary data dir, and
 * running shell commands inside a sandbox through its real agent.
 *
 * @module
 * @internal
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { Process } from "../../src/gen/envd/process/process_pb";
import { ENVD_HEADERS } from "../../src/wire/envd";
import { createRuntime, type RuntimeOptions } from "../../src/local/runtime/runtime";
import type { RuntimeSandbox, SandboxRuntime, SandboxSpec } from "../../src/local/runtime/types";
import { agentBundleDir } from "./service";

/** What a command printed and how it ended. */
export interface CommandResult {
  /** The exit code; -1 when killed by a signal. */
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runInSandbox}. */
export interface RunOptions {
  /**
   * The user to run as.
   * @default the agent's default user (`user`)
   */
  user?: string;
  /**
   * Process lifetime; the agent kills the command when it expires.
   * @default 30000 ms
   */
  timeoutMs?: number;
}

/**
 * Runs `/bin/sh -c <command>` in the sandbox whose agent listens on
 * `socketPath` (Process.Start) and collects its output and exit code.
 */
export async function runInSandbox(
  socketPath: string,
  command: string,
  options: RunOptions = {},
): Promise<CommandResult> {
  const transport = createConnectTransport({
    baseUrl: "http://localhost",
    httpVersion: "1.1",
    useBinaryFormat: false,
    nodeOptions: { socketPath },
  });
  const client = createClient(Process, transport);
  const headers: Record<string, string> = {};
  if (options.user)
    headers[ENVD_HEADERS.authorization] =
      `Basic ${Buffer.from(`${options.user}:`).toString("base64")}`;
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const result: CommandResult = { exitCode: 0, stdout: "", stderr: "" };
  const stream = client.start(
    { process: { cmd: "/bin/sh", args: ["-c", command], envs: {} }, stdin: false },
    { headers, timeoutMs: options.timeoutMs ?? 30_000 },
  );
  for await (const res of stream) {
    const ev = res.event?.event;
    if (ev?.case === "data") {
      const out = ev.value.output;
      if (out.case === "stdout")
        result.stdout += decoder.stdout.decode(out.value, { stream: true });
      if (out.case === "stderr")
        result.stderr += decoder.stderr.decode(out.value, { stream: true });
    } else if (ev?.case === "end") {
      result.exitCode = ev.value.exitCode;
    }
  }
  return result;
}

/** A runtime over a fresh temporary data dir; `dispose` closes it and removes the dir. */
export interface TestRuntime {
  runtime: SandboxRuntime;
  dataDir: string;
  dispose(): Promise<void>;
}

/**
 * Creates a runtime for one test file, using the agent bundle in
 * `$SANDBOX_IAC_TEST_AGENT_DIR` when set, else `dist/agent` (built by `npm run build`).
 * `options.dnsResolvers` points the sandboxes' DNS rules at a stand-in resolver;
 * `options.log` receives the runtime's lines (each start's phases among them).
 */
export async function createTestRuntime(
  options: Partial<Pick<RuntimeOptions, "dnsResolvers" | "maxSandboxes" | "log">> = {},
): Promise<TestRuntime> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "sandbox-iac-rt-"));
  const runtime = await createRuntime({
    dataDir,
    agentBundleDir: await agentBundleDir(),
    ...options,
  });
  return {
    runtime,
    dataDir,
    async dispose() {
      await runtime.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The spec the isolation tests start sandboxes with: the base layer, one CPU,
 * 256 MiB and internet access, with `overrides` on top.
 */
export function sandboxSpec(
  t: TestRuntime,
  sandboxID: string,
  overrides: Partial<SandboxSpec> = {},
): SandboxSpec {
  return {
    sandboxID,
    layers: [t.runtime.baseLayerId],
    cpuCount: 1,
    memoryMB: 256,
    allowInternetAccess: true,
    ...overrides,
  };
}

/** A fresh runtime with two sandboxes started in it, for tests of one sandbox against the other. */
export async function startSandboxPair(
  idA: string,
  idB: string,
): Promise<{ t: TestRuntime; a: RuntimeSandbox; b: RuntimeSandbox }> {
  const t = await createTestRuntime();
  try {
    const a = await t.runtime.start(sandboxSpec(t, idA));
    const b = await t.runtime.start(sandboxSpec(t, idB));
    return { t, a, b };
  } catch (err) {
    await t.dispose();
    throw err;
  }
}
