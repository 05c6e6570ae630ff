/**
 * `kill -9` of the service in the middle of an image pull: the pull's
 * directory (with the registry credentials file) is left behind by the dead
 * service and removed by the next start, and the next build from an image
 * succeeds.
 */
import * as fs from "node:fs/promises";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { sdk } from "./util";
import { eventually } from "../support/eventually";
import { makeBusyboxImage, startRegistry, type TestRegistry } from "../support/registry";
import {
  startService,
  startServiceProcess,
  type ServiceProcess,
  type TestService,
} from "../support/service";

jest.setTimeout(300_000);

let served: ServiceProcess | undefined;
let svc: TestService | undefined;
let registry: TestRegistry | undefined;
let silent: net.Server | undefined;
/** The connections `silent` accepted, destroyed with it: closing a server leaves them open. */
const silentConnections = new Set<net.Socket>();
let work: string | undefined;

afterAll(async () => {
  await svc?.close();
  await served?.close();
  await registry?.close();
  for (const conn of silentConnections) conn.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  if (work) await fs.rm(work, { recursive: true, force: true });
});

async function pullLeftovers(dataDir: string): Promise<string[]> {
  const names = await fs.readdir(path.join(dataDir, "layers"));
  return names.filter((n) => n.startsWith(".tmp-"));
}

it("removes a pull that kill -9 interrupted at the next start, and builds from an image again", async () => {
  // GIVEN a registry that accepts connections and never answers, so the pull is in flight.
  // It reads what comes (and so sees a client go away); an unread request would hold the
  // connection half-open in this process after the pull died, until the worker exits.
  silent = net.createServer((conn) => {
    silentConnections.add(conn);
    conn.on("close", () => silentConnections.delete(conn));
    conn.on("error", () => undefined);
    conn.resume();
  });
  await new Promise<void>((resolve) => silent!.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as net.AddressInfo).port;
  served = await startServiceProcess();
  const dataDir = served.dataDir;
  const pending = sdk(
    served,
    "build-from-image",
    "hung-app",
    `127.0.0.1:${port}/tests/busy:v1`,
    "tester",
    "pw-crash-never-kept",
  ).catch(() => undefined);
  const [pull] = await eventually(async () => {
    const left = await pullLeftovers(dataDir);
    return left.length > 0 && left;
  });
  expect(pull).toMatch(/^\.tmp-pull-/);

  // WHEN the service dies with the pull in flight and starts again
  await served.kill9();
  await pending;
  svc = await startService({ dataDir });

  // THEN the pull's directory (credentials file included) is gone, and image builds work
  expect(await pullLeftovers(dataDir)).toEqual([]);
  work = await fs.mkdtemp(path.join(os.tmpdir(), "sbx-image-crash-"));
  registry = await startRegistry();
  await registry.push(await makeBusyboxImage(work), "tests/busy:v1");
  const built = await sdk(
    svc,
    "build-from-image",
    "after-crash-app",
    `${registry.host}/tests/busy:v1`,
    "",
    "",
    "cat /etc/two.txt",
  );
  expect(built).toMatchObject({ ok: true });
  expect(built.logs).toContain("two");
});
