/**
 * The harness's rendering of a run as `pulumi up` prints it, and the
 * splitting of the plugin's output into diagnostics, on fixed inputs (the
 * end-to-end check with the real plugin and service is
 * test/pulumi/diagnostics.test.ts).
 */
import { DiagnosticCollector } from "./diagnostics";
import { formatDuration, renderResult } from "./display";
import type { HarnessResult } from "./result";

const TYPE = "pulumi-nodejs:dynamic/sandbox-iac:Provisioner";
const urn = (name: string): string => `urn:pulumi:dev::proj::${TYPE}::${name}`;

function result(over: Partial<HarnessResult>): HarnessResult {
  return {
    operations: [],
    outputs: {},
    secretOutputs: [],
    state: { resources: [] },
    errors: [],
    diagnostics: [],
    log: "",
    run: { command: "up", project: "proj", stack: "dev", durationMs: 12_400 },
    ...over,
  };
}

describe("DiagnosticCollector", () => {
  it("makes one diagnostic per line across chunks, stdout as info and stderr as info#err", () => {
    const c = new DiagnosticCollector();
    c.push("building tem", "stdout");
    c.push("plate\r\n\n  | out", "stdout");
    c.push("oops\n", "stderr");
    c.push("put", "stdout");
    expect(c.flush()).toEqual([
      { severity: "info", message: "building template" },
      { severity: "info#err", message: "oops" },
      { severity: "info", message: "  | output" },
    ]);
  });
});

describe("renderResult", () => {
  it("prints created resources with durations, the stack's diagnostics, masked outputs and counts", () => {
    const shown = renderResult(
      result({
        operations: [
          { op: "create", urn: urn("setup"), type: TYPE, name: "setup", durationMs: 1930 },
        ],
        diagnostics: [{ severity: "info", message: "Provisioner:   | hello" }],
        outputs: { token: "s3cret", id: "i1" },
        secretOutputs: ["token"],
      }),
    );
    expect(shown).toMatch(new RegExp(`^ \\+ +└─ ${TYPE} +setup +created \\(1\\.93s\\)$`, "m"));
    expect(shown).toMatch(/^ \+ +pulumi:pulumi:Stack +proj-dev +created +1 message$/m);
    expect(shown).toContain(
      "Diagnostics:\n  pulumi:pulumi:Stack (proj-dev):\n    Provisioner:   | hello\n",
    );
    expect(shown).toContain('Outputs:\n    id   : "i1"\n    token: [secret]\n');
    expect(shown).toContain("Resources:\n    + 2 created\n");
    expect(shown).toMatch(/Duration: 12s$/);
    expect(shown).not.toContain("s3cret");
  });

  it("says what a preview would do, without durations", () => {
    const shown = renderResult(
      result({
        run: { command: "preview", project: "proj", stack: "dev", durationMs: 900 },
        operations: [{ op: "update", urn: urn("setup"), type: TYPE, name: "setup" }],
      }),
    );
    expect(shown).toMatch(/^Previewing update \(dev\):$/m);
    expect(shown).toMatch(new RegExp(`└─ ${TYPE} +setup +update$`, "m"));
    expect(shown).toContain("Resources:\n    1 unchanged\n    ~ 1 to update\n");
  });

  it("shows a failed step on its resource's row and its error under that resource", () => {
    const shown = renderResult(
      result({
        errors: [`update of ${urn("setup")} failed: command "x" exited with code 3\noutput: x`],
      }),
    );
    expect(shown).toMatch(
      new RegExp(`└─ ${TYPE} +setup +\\*\\*updating failed\\*\\* +1 error$`, "m"),
    );
    expect(shown).toContain(
      `  ${TYPE} (setup):\n    error: command "x" exited with code 3\n    output: x\n`,
    );
  });
});

describe("formatDuration", () => {
  it("prints seconds as the CLI does", () => {
    expect(formatDuration(450)).toBe("0.45s");
    expect(formatDuration(12_400)).toBe("12s");
    expect(formatDuration(125_000)).toBe("2m5s");
  });
});
