import { fileTableWarning, type HostLimits } from "./host-limits";

const GIB = 1024 ** 3;
const limits = (fileMax: number): HostLimits => ({
  sandboxesMemoryBytes: 20 * GIB,
  sandboxesPidsMax: 24_576,
  defaultMaxSandboxes: 40,
  sharedPtys: 3072,
  fileMax,
});

describe("fileTableWarning()", () => {
  it("warns, naming the fix, when the sandboxes' memory holds more open files than fs.file-max", () => {
    const warning = fileTableWarning(limits(2_466_160));
    expect(warning).toMatch(/fs\.file-max \(2466160\) is below the 107374182 open files/);
    expect(warning).toMatch(/sysctl -w fs\.file-max=9223372036854775807/);
  });

  it("says nothing when fs.file-max is systemd's maximum", () => {
    expect(fileTableWarning(limits(Number.parseInt("9223372036854775807", 10)))).toBeUndefined();
  });
});
