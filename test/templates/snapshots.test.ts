import { createSandbox, runThroughProxy } from "../local/support";
import { call } from "./util";
import { useService, type TestService } from "../support/service";

jest.setTimeout(180_000);

let svc: TestService;
useService((s) => (svc = s));

describe("snapshots", () => {
  it("captures a sandbox's files into a snapshot that new sandboxes start from, lists and deletes it", async () => {
    const { sandboxID } = await createSandbox(svc);
    expect((await runThroughProxy(svc, sandboxID, "echo snap-content > ~/snap.txt")).exitCode).toBe(
      0,
    );

    const unnamed = await call(svc, "POST", `/sandboxes/${sandboxID}/snapshots`, {});
    expect(unnamed.status).toBe(201);
    expect(unnamed.body).toEqual({
      snapshotID: expect.stringMatching(/^[a-z0-9]{20}:default$/),
      names: [unnamed.body.snapshotID],
    });

    const named = await call(svc, "POST", `/sandboxes/${sandboxID}/snapshots`, {
      name: "My-Snap",
    });
    expect(named.body).toEqual({ snapshotID: "my-snap:default", names: ["my-snap:default"] });
    // the sandbox keeps running after the snapshot
    expect((await runThroughProxy(svc, sandboxID, "cat ~/snap.txt")).stdout).toBe("snap-content\n");

    for (const id of [unnamed.body.snapshotID, named.body.snapshotID]) {
      const child = await createSandbox(svc, { templateID: id });
      expect((await runThroughProxy(svc, child.sandboxID, "cat ~/snap.txt; id -un")).stdout).toBe(
        "snap-content\nuser\n",
      );
      if (id === named.body.snapshotID) {
        const inUse = await call(svc, "DELETE", `/templates/${encodeURIComponent(id)}`);
        expect(inUse.status).toBe(400);
        expect(inUse.body.message).toContain("used by running or paused sandboxes");
      }
      expect((await call(svc, "DELETE", `/sandboxes/${child.sandboxID}`)).status).toBe(204);
    }

    const listed = await call(svc, "GET", `/snapshots?sandboxID=${sandboxID}`);
    expect(listed.body.map((s: { snapshotID: string }) => s.snapshotID).sort()).toEqual(
      [unnamed.body.snapshotID, named.body.snapshotID].sort(),
    );
    const paged = await call(svc, "GET", `/snapshots?sandboxID=${sandboxID}&limit=1`);
    expect(paged.body).toHaveLength(1);
    const next = paged.headers.get("x-next-token");
    expect(next).toBeTruthy();
    const second = await call(
      svc,
      "GET",
      `/snapshots?sandboxID=${sandboxID}&limit=1&nextToken=${next}`,
    );
    expect(second.body).toHaveLength(1);
    expect(second.headers.get("x-next-token")).toBeNull();
    expect((await call(svc, "GET", "/snapshots?name=my-snap")).body).toEqual([named.body]);

    expect(
      (await call(svc, "DELETE", `/templates/${encodeURIComponent(named.body.snapshotID)}`)).status,
    ).toBe(204);
    expect(
      (await call(svc, "DELETE", `/templates/${encodeURIComponent(unnamed.body.snapshotID)}`))
        .status,
    ).toBe(204);
    expect((await call(svc, "GET", `/snapshots?sandboxID=${sandboxID}`)).body).toEqual([]);
    expect(
      (await call(svc, "POST", "/sandboxes", { templateID: named.body.snapshotID, timeout: 60 }))
        .status,
    ).toBe(404);
    await call(svc, "DELETE", `/sandboxes/${sandboxID}`);
  });

  it("adds a new build to an existing snapshot name", async () => {
    const { sandboxID } = await createSandbox(svc);
    await runThroughProxy(svc, sandboxID, "echo one > ~/v.txt");
    await call(svc, "POST", `/sandboxes/${sandboxID}/snapshots`, { name: "versioned" });
    await runThroughProxy(svc, sandboxID, "echo two > ~/v.txt");
    const again = await call(svc, "POST", `/sandboxes/${sandboxID}/snapshots`, {
      name: "versioned",
    });
    expect(again.body.snapshotID).toBe("versioned:default");
    const tpl = await call(svc, "GET", "/templates/versioned");
    expect(tpl.body.builds).toHaveLength(2);
    const child = await createSandbox(svc, { templateID: "versioned" });
    expect((await runThroughProxy(svc, child.sandboxID, "cat ~/v.txt")).stdout).toBe("two\n");
    await call(svc, "DELETE", `/sandboxes/${child.sandboxID}`);
    await call(svc, "DELETE", `/sandboxes/${sandboxID}`);
  });

  it("fails when the sandbox does not exist with 404", async () => {
    const res = await call(svc, "POST", "/sandboxes/inosuchsandbox0000000/snapshots", {});
    expect(res).toMatchObject({ status: 404, body: { code: 404 } });
  });

  it("fails when the snapshot name is invalid with 400 naming body.name", async () => {
    const { sandboxID } = await createSandbox(svc);
    const res = await call(svc, "POST", `/sandboxes/${sandboxID}/snapshots`, {
      name: "bad name",
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("body.name");
    await call(svc, "DELETE", `/sandboxes/${sandboxID}`);
  });
});
