import { redact } from "../../../errors";
import type { SandboxRuntime } from "../../runtime/types";
import { envdAccessToken, trafficAccessToken } from "../tokens";
import { forgettingTokens } from "./runtime-lifecycle";

const SECRET = "lifecycle-test-secret-0123456789abcdef";

/** A runtime whose destroy succeeds or fails as told; nothing else of it is used here. */
function runtimeWhoseDestroy(outcome: "succeeds" | "fails"): SandboxRuntime {
  return {
    sandboxesMemoryBytes: 1024 ** 3,
    start: () => Promise.reject(new Error("not started in this test")),
    destroy: () =>
      outcome === "succeeds" ? Promise.resolve() : Promise.reject(new Error("layer busy")),
  } as unknown as SandboxRuntime;
}

describe("the manager's sandbox lifecycle", () => {
  it("stops redacting a sandbox's tokens once its destroy succeeded", async () => {
    const id = "ilifecycle0000000001";
    const tokens = [envdAccessToken(SECRET, id), trafficAccessToken(SECRET, id)];
    for (const token of tokens) expect(redact(`t=${token}`)).toBe("t=[redacted]");
    await forgettingTokens(runtimeWhoseDestroy("succeeds"), SECRET).destroy(id);
    for (const token of tokens) expect(redact(`t=${token}`)).toBe(`t=${token}`);
  });

  it("keeps redacting them when the destroy failed, since the sandbox may still run", async () => {
    const id = "ilifecycle0000000002";
    const token = envdAccessToken(SECRET, id);
    await expect(
      forgettingTokens(runtimeWhoseDestroy("fails"), SECRET).destroy(id),
    ).rejects.toThrow("layer busy");
    expect(redact(`t=${token}`)).toBe("t=[redacted]");
  });

  it("passes on the memory every sandbox shares, which sizes the warm pool's share", () => {
    expect(forgettingTokens(runtimeWhoseDestroy("succeeds"), SECRET).sandboxesMemoryBytes).toBe(
      1024 ** 3,
    );
  });
});
