/**
 * `kill -9` of the service in the middle of work, then a restart on the same
 * data dir: nothing the user had is lost, nothing half-written is left.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { call, createSandbox, runThroughProxy } from "../local/support";
import { eventually } from "../support/eventually";
import {
  startService,
  startServiceProcess,
  type Endpoint,
  type ServiceProcess,
  type TestService,
} from "../support/service";

let svc: TestService | undefined;
let served: ServiceProcess | undefined;

afterEach(async () => {
  await svc?.close();
  svc = undefined;
  await served?.close();
  served = undefined;
});

/** Host processes whose command line mentions `needle` (other than this test's own). */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (cmd.includes(needle)) found.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function upload(remote: Endpoint, sandboxID: string, p: string, data: string) {
  return fetch(`${remote.sandboxUrl}/files?path=${encodeURIComponent(p)}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/octet-stream",
      "E2b-Sandbox-Id": sandboxID,
      "E2b-Sandbox-Port": "49983",
    },
    body: data,
  });
}

describe("kill -9 of the service", () => {
  it("mid-upload keeps the old file intact and leaves no partial file", async () => {
    const remote = await startServiceProcess();
    served = remote;
    const { dataDir } = remote;
    const { sandboxID } = await createSandbox(remote);
    expect((await upload(remote, sandboxID, "/home/user/doc.txt", "version one\n")).status).toBe(
      200,
    );

    // A big upload, cut off by the crash after part of it is on disk (its temporary
    // file is seen from inside: the writable layer lives in the sandbox's disk image).
    const url = new URL(`${remote.sandboxUrl}/files?path=/home/user/doc.txt`);
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: {
        "Content-Type": "application/octet-stream",
        "Content-Length": String(64 * 1024 * 1024),
        "E2b-Sandbox-Id": sandboxID,
        "E2b-Sandbox-Port": "49983",
      },
    });
    req.on("error", () => undefined);
    req.write(Buffer.alloc(4 * 1024 * 1024, "x"));
    await eventually(async () =>
      (await runThroughProxy(remote, sandboxID, "ls -A /home/user")).stdout.includes(
        ".sandbox-iac-upload-",
      ),
    );
    await remote.kill9();
    req.destroy();

    svc = await startService({ dataDir });
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      state: "paused",
    });
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/doc.txt")).stdout).toBe(
      "version one\n",
    );
    expect((await runThroughProxy(svc, sandboxID, "ls -A /home/user")).stdout).not.toMatch(
      /sandbox-iac/,
    );
  });

  it("mid-snapshot leaves no half-copied layer and no copy still running", async () => {
    const remote = await startServiceProcess();
    served = remote;
    const { dataDir } = remote;
    const { sandboxID } = await createSandbox(remote);
    // Enough data that the layer copy takes a while.
    const made = await runThroughProxy(
      remote,
      sandboxID,
      "head -c 300M /dev/urandom > /home/user/big.bin && mkdir /home/user/many && cd /home/user/many && seq 1 30000 | xargs touch && echo kept > /home/user/small.txt",
    );
    expect(made.exitCode).toBe(0);

    const layers = path.join(dataDir, "layers");
    const snapshot = call(remote, "POST", `/sandboxes/${sandboxID}/snapshots`, {}).catch(
      () => undefined,
    );
    // Polled every 5 ms on purpose: the copy lasts about a second and the point of
    // the test is to kill the service while the partial layer exists.
    const partial = await eventually(
      () => fs.readdirSync(layers).find((n) => n.startsWith(".tmp-")) ?? false,
      { timeoutMs: 30_000, intervalMs: 5 },
    );
    const layersBefore = fs.readdirSync(layers).filter((n) => !n.startsWith("."));
    await remote.kill9();
    await snapshot;
    // The copy dies with the service instead of writing on into the partial layer.
    await eventually(() => processesMentioning(partial).length === 0, { timeoutMs: 5_000 });

    svc = await startService({ dataDir });
    expect(fs.readdirSync(layers).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    expect(fs.readdirSync(layers).filter((n) => !n.startsWith("."))).toEqual(layersBefore);
    const snapshots = await call(svc, "GET", `/snapshots?sandboxID=${sandboxID}`);
    expect(snapshots.body).toEqual([]);
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/small.txt")).stdout).toBe(
      "kept\n",
    );
  });

  it("leaves no layer on disk that no template or sandbox uses, keeping those in use", async () => {
    // GIVEN a snapshot (a captured, recorded layer) and a sandbox paused by the crash
    const remote = await startServiceProcess();
    served = remote;
    const { dataDir } = remote;
    const { sandboxID } = await createSandbox(remote);
    expect(
      (await runThroughProxy(remote, sandboxID, "echo kept > /home/user/k.txt")).exitCode,
    ).toBe(0);
    const snap = await call(remote, "POST", `/sandboxes/${sandboxID}/snapshots`, {
      name: "kept-snap",
    });
    expect(snap.status).toBe(201);
    const layers = path.join(dataDir, "layers");
    const recorded = fs.readdirSync(layers).filter((n) => /^[0-9a-f]{16}$/.test(n));
    expect(recorded).toHaveLength(1);
    // ... and a layer the service captured but was killed before recording
    // (the window between the copy's rename and the catalog's write).
    const unrecorded = "0123456789abcdef";
    fs.cpSync(path.join(layers, recorded[0]), path.join(layers, unrecorded), { recursive: true });
    await remote.kill9();

    // WHEN the service starts again on the data dir
    svc = await startService({ dataDir });

    // THEN the unrecorded layer is gone, and the snapshot and the sandbox still work
    expect(fs.existsSync(path.join(layers, unrecorded))).toBe(false);
    expect(fs.existsSync(path.join(layers, recorded[0]))).toBe(true);
    const fromSnap = await createSandbox(svc, { templateID: "kept-snap" });
    expect((await runThroughProxy(svc, fromSnap.sandboxID, "cat /home/user/k.txt")).stdout).toBe(
      "kept\n",
    );
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/k.txt")).stdout).toBe("kept\n");
  });
});
