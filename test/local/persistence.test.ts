import * as fs from "node:fs";
import * as path from "node:path";
import {
  startService,
  startServiceProcess,
  type ServiceProcess,
  type TestService,
} from "../support/service";
import { call, createSandbox, runThroughProxy } from "./support";

let svc: TestService | undefined;
let served: ServiceProcess | undefined;

afterAll(async () => {
  await svc?.close();
  await served?.close();
});

describe("persistence", () => {
  it("brings sandboxes back paused with their files after close() and a restart", async () => {
    svc = await startService();
    const { dataDir } = svc;
    const key = svc.apiKey;
    expect(key).toMatch(/^e2b_[0-9a-f]{40}$/);
    expect(fs.statSync(path.join(dataDir, "api-key")).mode & 0o777).toBe(0o600);
    const { sandboxID, envdAccessToken } = await createSandbox(svc, {
      secure: true,
      metadata: { keep: "yes" },
    });
    await runThroughProxy(svc, sandboxID, "echo survived > /home/user/data.txt", envdAccessToken);
    svc = await svc.restart();
    expect(svc.apiKey).toBe(key);
    const info = await call(svc, "GET", `/sandboxes/${sandboxID}`);
    expect(info.body).toMatchObject({
      state: "paused",
      metadata: { keep: "yes" },
      envdAccessToken,
    });
    const resumed = await call(svc, "POST", `/sandboxes/${sandboxID}/connect`, { timeout: 60 });
    expect(resumed.status).toBe(201);
    expect(
      (await runThroughProxy(svc, sandboxID, "cat /home/user/data.txt", envdAccessToken)).stdout,
    ).toBe("survived\n");
    await svc.close();
    svc = undefined;
  });

  it("brings sandboxes back paused with their files after kill -9 of the CLI", async () => {
    const remote = await startServiceProcess();
    served = remote;
    const { readyLine: ready, apiUrl, apiKey } = remote;
    expect(ready).toMatch(/E2B_SANDBOX_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(apiUrl).not.toMatch(/:0$/);
    const { sandboxID } = await createSandbox(remote);
    await runThroughProxy(remote, sandboxID, "echo crash-safe > /home/user/c.txt");

    await remote.kill9();

    svc = await startService({ dataDir: remote.dataDir });
    expect(svc.apiKey).toBe(apiKey);
    expect((await call(svc, "GET", `/sandboxes/${sandboxID}`)).body).toMatchObject({
      state: "paused",
    });
    expect(
      (await call(svc, "POST", `/sandboxes/${sandboxID}/resume`, { timeout: 60 })).status,
    ).toBe(201);
    expect((await runThroughProxy(svc, sandboxID, "cat /home/user/c.txt")).stdout).toBe(
      "crash-safe\n",
    );
  });
});
