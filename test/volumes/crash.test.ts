/**
 * Volumes and secrets survive `kill -9` of the service: the CLI is killed
 * after a sandbox wrote into a mounted volume; the restarted service has the
 * volume, its content, its token and the secret, and the sandbox resumes
 * with the volume mounted again.
 */
import { Sandbox, Secret, Volume } from "e2b";
import {
  connectionOpts,
  startService,
  startServiceProcess,
  type ServiceProcess,
  type TestService,
} from "../support/service";

// A service process started, killed and started again, and a sandbox resumed:
// minutes on a loaded 2-core machine, where the default limit was not enough.
jest.setTimeout(300_000);

let served: ServiceProcess | undefined;
let svc: TestService | undefined;

afterAll(async () => {
  await svc?.close();
  await served?.close();
});

it("keeps volumes, their content and secrets across kill -9, and remounts on resume", async () => {
  served = await startServiceProcess();
  const opts = connectionOpts(served);
  const { apiUrl } = opts;

  const vol = await Volume.create("crash-vol", opts);
  await vol.writeFile("/before.txt", "written before", { apiUrl });
  const secret = await Secret.create("crash-secret", "crash-secret-value", opts);
  const sbx = await Sandbox.create({
    ...opts,
    volumeMounts: { "/mnt/v": vol },
    timeoutMs: 300_000,
  });
  await sbx.commands.run("echo from-sandbox > /mnt/v/inside.txt");

  await served.kill9();

  svc = await startService({ dataDir: served.dataDir });
  const again = connectionOpts(svc);
  const back = await Volume.connect(vol.volumeId, again);
  expect(back.token).toBe(vol.token);
  expect(await back.readFile("/before.txt", { apiUrl: svc.apiUrl })).toBe("written before");
  expect(await back.readFile("/inside.txt", { apiUrl: svc.apiUrl })).toBe("from-sandbox\n");
  expect((await Secret.getInfo("crash-secret", again)).secretId).toBe(secret.secretId);

  const resumed = await Sandbox.connect(sbx.sandboxId, { ...again, timeoutMs: 120_000 });
  expect((await resumed.commands.run("cat /mnt/v/inside.txt /mnt/v/before.txt")).stdout).toBe(
    "from-sandbox\nwritten before",
  );
  expect((await resumed.getInfo()).volumeMounts).toEqual([{ name: "crash-vol", path: "/mnt/v" }]);
  await resumed.kill();
});
