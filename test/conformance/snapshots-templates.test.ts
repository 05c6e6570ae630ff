/**
 * Conformance: snapshots used as templates, and a template built with the
 * SDK's Template builder from `base` (e2b@2.51.0).
 */
import { Sandbox, Template, waitForFile } from "e2b";
import { connectionOpts, useService, type TestService } from "../support/service";

describe("snapshots and templates with e2b@2.51.0", () => {
  let service: TestService;
  useService((s) => (service = s));

  it("snapshots a sandbox, creates a sandbox from the snapshot, lists and deletes it", async () => {
    const name = `snap-${Date.now()}`;
    const source = await Sandbox.create({ ...connectionOpts(service), timeoutMs: 120_000 });
    let fromSnapshot: Sandbox | undefined;
    try {
      await source.files.write("/home/user/state.txt", "captured");
      await source.commands.run("rm -f /etc/motd", { user: "root" });
      const snapshot = await source.createSnapshot({ name });
      expect(snapshot.snapshotId).toContain(name);

      fromSnapshot = await Sandbox.create(snapshot.snapshotId, {
        ...connectionOpts(service),
        timeoutMs: 120_000,
      });
      expect(await fromSnapshot.files.read("/home/user/state.txt")).toBe("captured");
      expect(await fromSnapshot.files.exists("/etc/motd")).toBe(false);

      const listed = await Sandbox.listSnapshots({
        ...connectionOpts(service),
        sandboxId: source.sandboxId,
      }).nextItems();
      expect(listed.map((s) => s.snapshotId)).toContain(snapshot.snapshotId);

      await fromSnapshot.kill();
      fromSnapshot = undefined;
      expect(await Sandbox.deleteSnapshot(snapshot.snapshotId, connectionOpts(service))).toBe(true);
      expect(await Sandbox.deleteSnapshot(snapshot.snapshotId, connectionOpts(service))).toBe(
        false,
      );
    } finally {
      await fromSnapshot?.kill();
      await source.kill();
    }
  });

  it("builds a template from base with the SDK's Template builder and starts a sandbox from it", async () => {
    const name = `conf-${Date.now()}`;
    const logs: string[] = [];
    const template = Template()
      .fromTemplate("base")
      .runCmd("echo built > /home/user/built.txt")
      .setEnvs({ BUILT_BY: "conformance" })
      .setWorkdir("/home/user");
    const info = await Template.build(template, name, {
      ...connectionOpts(service),
      onBuildLogs: (e) => void logs.push(String(e.message)),
    });
    expect(info.templateId).toBeTruthy();
    expect(await Template.exists(name, connectionOpts(service))).toBe(true);

    const sbx = await Sandbox.create(name, { ...connectionOpts(service), timeoutMs: 120_000 });
    try {
      expect((await sbx.files.read("/home/user/built.txt")).trim()).toBe("built");
      expect((await sbx.commands.run("echo $BUILT_BY")).stdout.trim()).toBe("conformance");
    } finally {
      await sbx.kill();
    }
  });

  it("starts a template's start command in every new sandbox and waits for its ready command", async () => {
    const name = `startcmd-${Date.now()}`;
    const template = Template()
      .fromTemplate("base")
      .setStartCmd(
        "sh -c 'sleep 0.5; echo up > /tmp/ready; exec sleep 600'",
        waitForFile("/tmp/ready"),
      );
    await Template.build(template, name, connectionOpts(service));

    const sbx = await Sandbox.create(name, { ...connectionOpts(service), timeoutMs: 120_000 });
    try {
      // Create returned only once the ready command succeeded.
      expect((await sbx.files.read("/tmp/ready")).trim()).toBe("up");
      const running = await sbx.commands.list();
      expect(running.some((p) => p.args.join(" ").includes("exec sleep 600"))).toBe(true);
    } finally {
      await sbx.kill();
    }
  });
});
