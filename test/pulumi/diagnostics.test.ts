/**
 * What a user sees of the provider in `pulumi up`: the plugin's output is
 * forwarded as diagnostics (docs/pulumi-provider.md#provider-output-and-diagnostics)
 * and the harness prints them the way the CLI does
 * (docs/pulumi-provider.md#what-pulumi-up-shows): the template's build log,
 * the setup commands' output, and how long each step took.
 */

import { HarnessRunError, renderResult, up } from "../harness";
import { pulumiStack, stackOptions } from "./support";

jest.setTimeout(600_000);

const stack = pulumiStack("diagnostics", { destroyAfter: true });

const TYPE = "pulumi-nodejs:dynamic/sandbox-iac";

describe("what pulumi up shows of the provider", () => {
  it("lists the build log, the setup commands' output and each step's duration", async () => {
    const result = await up(stack.dir, stackOptions(stack.svc, stack.dir, { name: "diag-tpl" }));
    const shown = renderResult(result);

    expect(shown).toMatch(/^Updating \(test\):$/m);
    expect(shown).toMatch(
      new RegExp(`^ \\+ +├─ ${TYPE}:Template +tpl +created \\(\\d+(\\.\\d+)?s\\)$`, "m"),
    );
    expect(shown).toMatch(
      new RegExp(`^ \\+ +└─ ${TYPE}:Provisioner +setup +created \\(\\d+(\\.\\d+)?s\\)$`, "m"),
    );
    // Under the stack, as the CLI attributes output of a plugin that has no URN to give.
    expect(shown).toMatch(/^Diagnostics:\n {2}pulumi:pulumi:Stack \(test-test\):$/m);
    expect(shown).toMatch(
      /^ {4}Template diag-tpl: info \[1\] Step 1\/1: RUN echo built-by-step > \/tmp\/built\.txt/m,
    );
    expect(shown).toMatch(/^ {4}Template diag-tpl: created \w+ in \d+\.\ds$/m);
    // A Provisioner being created has no name or sandbox yet: its template names it.
    expect(shown).toMatch(/^ {4}Provisioner from template \w+: \[1\/2\] \$ echo hello-from-setup/m);
    expect(shown).toMatch(/^ {4}Provisioner from template \w+: {3}\| hello-from-setup$/m);
    expect(shown).toMatch(/^ {4}Provisioner from template \w+: {3}! warned-on-stderr$/m);
    expect(shown).toMatch(/^ {4}Provisioner from template \w+: {3}\| built-by-step$/m);
    expect(shown).toMatch(/^Resources:\n {4}\+ 3 created$/m);
    expect(shown).toMatch(/^Duration: \d/m);
    // The provider's lines are stdout (info), the engine's own noise is not among them.
    expect(result.diagnostics.map((d) => d.message)).toContainEqual(
      expect.stringMatching(/^Provisioner from template \w+: {3}\| hello-from-setup$/),
    );
    expect(result.diagnostics.every((d) => !d.message.includes("DEP0025"))).toBe(true);
  });

  it("shows a failing setup command's output next to the error", async () => {
    const opts = stackOptions(stack.svc, stack.dir, {
      name: "diag-tpl",
      second: "echo about-to-fail; exit 3",
    });
    const failure = await up(stack.dir, opts).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(HarnessRunError);
    const shown = renderResult((failure as HarnessRunError).result);
    expect(shown).toMatch(/^ {4}Provisioner \S+: {3}\| about-to-fail$/m);
    expect(shown).toMatch(
      new RegExp(`^ +└─ ${TYPE}:Provisioner +setup +\\*\\*updating failed\\*\\* +1 error$`, "m"),
    );
    expect(shown).toMatch(
      new RegExp(`^ {2}${TYPE}:Provisioner \\(setup\\):\n {4}error: .*exited with code 3`, "m"),
    );
  });
});
