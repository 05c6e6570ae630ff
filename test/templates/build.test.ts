import { call, sdk } from "./util";
import { useService, type TestService } from "../support/service";

jest.setTimeout(300_000);

let svc: TestService;
useService((s) => (svc = s));

describe("Template.build() from the official SDK", () => {
  it("builds RUN, COPY, ENV, WORKDIR and USER steps that a sandbox from the template then sees", async () => {
    const built = await sdk(svc, "build-full", "full-app");
    expect(built).toMatchObject({ ok: true, templateId: expect.stringMatching(/^[a-z0-9]{20}$/) });
    expect(built.logs).toContain("building-as-user");

    const checked = await sdk(svc, "sandbox-check", "full-app");
    expect(checked).toMatchObject({ ok: true });
    expect(checked.stdout.split("\n")).toEqual([
      "builder",
      "/srv/work",
      "hi there|2",
      "alpha",
      "beta",
      "hello from copy",
      "tool-ran",
      "root 755",
      "user 644",
      "builder",
      "created-in-workdir",
      "hi there",
      "made",
      "",
    ]);
  });

  it("fails when a RUN step exits non-zero, with the command, exit code and stderr in the reason", async () => {
    const built = await sdk(svc, "build-fail", "broken-app");
    expect(built.ok).toBe(false);
    expect(built.error).toContain("exit code 3");
    expect(built.error).toContain("it broke");
    expect(built.error).toContain("exit 3");

    const tpl = await call(svc, "GET", "/templates/broken-app");
    const buildID = tpl.body.builds[0].buildID;
    const status = await call(
      svc,
      "GET",
      `/templates/${tpl.body.templateID}/builds/${buildID}/status`,
    );
    expect(status.body).toMatchObject({
      status: "error",
      logs: [],
      reason: { step: "2", message: expect.stringContaining("exit code 3") },
    });
    expect(status.body.logEntries.map((e: { message: string }) => e.message)).toContain("first-ok");
  });

  it("builds on another template, keeping its files, env and user", async () => {
    const built = await sdk(svc, "build-on", "layered-app", "full-app");
    expect(built).toMatchObject({ ok: true });
    const ran = await sdk(
      svc,
      "run-in",
      "layered-app",
      "id -un; echo $GREETING; cat /opt/app/a.txt; cat /etc/layered.txt",
    );
    expect(ran).toMatchObject({ ok: true, stdout: "builder\nhi there\nalpha\nlayered\n" });
  });
});
