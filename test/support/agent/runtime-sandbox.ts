/**
 * Test helper: runs the agent in a real sandbox of the local runtime
 * (`src/local/runtime`), the way the control service does.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { createTestRuntime } from "../runtime";
import type { TestSandbox } from "./bwrap-sandbox";

/** Starts one sandbox from the built-in base layer in a fresh runtime. */
export async function startRuntimeSandbox(): Promise<TestSandbox> {
  const rt = await createTestRuntime();
  try {
    const sbx = await rt.runtime.start({
      sandboxID: `agt${randomBytes(6).toString("hex")}`,
      layers: ["base"],
      cpuCount: 1,
      memoryMB: 1024,
      allowInternetAccess: false,
    });
    return {
      socketPath: sbx.agentSocket,
      upperDir: "",
      stop: async () => {
        await sbx.stop();
        await rt.dispose();
      },
    };
  } catch (err) {
    await rt.dispose();
    throw err;
  }
}
