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
      "build.steps[0]",
      "sandboxID",
      "includeMetrics",
    ]) {
      expect(text).toContain(property);
    }
    expect(text).toContain('unknown key "comands" (got an array): did you mean "commands"?');
    // Both forms of run pass; a number is refused with its path and what run allows.
    expect(text).toMatch(
      /commands\[2\]\.run: must be a shell line \("apt-get update"\) or a non-empty list of shell lines .*, got 42/,
    );
    expect(text).not.toMatch(/commands\[[01]\]\.run/);
    expect(text).toContain(
      'unknown key "timeout" (got a number): did you mean "sandboxTimeoutSeconds"?',
    );
    // At any depth, with the path and the nearest key as the program writes them.
    expect(text).toContain(
      'commands[0].timeoutSecs: unknown key "timeoutSecs" (got a number): did you mean "timeoutSeconds"?',
    );
    expect(text).toContain(
      'build.formTemplate: unknown key "formTemplate" (got a string): did you mean "fromTemplate"?',
    );
    expect(text).not.toMatch(/from_template|timeout_seconds/);
    expect(stack.svc.requests).toEqual([]);
    expect(
      (failure as HarnessRunError).result.state.resources.filter((r) =>
        r.type.includes("sandbox-iac"),
      ),
    ).toEqual([]);
    expect(path.isAbsolute(stack.dir)).toBe(true);
  });
});
