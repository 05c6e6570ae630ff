import * as path from "node:path";
import { HarnessRunError, up } from "../harness";
import { pulumiStack, stackOptions } from "./support";

jest.setTimeout(300_000);

const stack = pulumiStack("invalid");

describe("check through Pulumi", () => {
  it("fails when inputs are invalid, listing every failure, before any service call", async () => {
    const failure = await up(stack.dir, stackOptions(stack.svc, stack.dir)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(HarnessRunError);
    const text = [
      ...(failure as HarnessRunError).result.errors,
      (failure as HarnessRunError).result.log,
    ].join("\n");
    for (const property of [
      "name",
      "cpuCount",
      "memoryMB",
      "build",
      "build.steps.0",
      "sandboxID",
      "includeMetrics",
    ]) {
      expect(text).toContain(property);
    }
    expect(text).toContain('unknown key "comands" (got an array): did you mean "commands"?');
    expect(text).toContain(
      'unknown key "timeout" (got a number): did you mean "sandboxTimeoutSeconds"?',
    );
    expect(stack.svc.requests).toEqual([]);
    expect(
      (failure as HarnessRunError).result.state.resources.filter((r) =>
        r.type.includes("sandbox-iac"),
      ),
    ).toEqual([]);
    expect(path.isAbsolute(stack.dir)).toBe(true);
  });
});
