/**
 * A sandbox gets none of the descriptors its service was started with. A
 * parent that leaves a descriptor open across exec (a shell's redirection,
 * a supervisor's pipe, a CI runner's) hands it to `sandbox-iac serve`; the
 * service's host spawner starts every sandbox's launch chain, so without
 * care that descriptor reached the agent and every command in the sandbox:
 * a host file or pipe in the tenant's hands.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { startServiceProcess, type ServiceProcess } from "../support/service";
import { createSandbox, runThroughProxy } from "../local/support";

jest.setTimeout(120_000);

/** Where the service's parent leaves a descriptor: far above anything the service opens early. */
const STRAY_FD = 200;

let svc: ServiceProcess;
beforeAll(async () => {
  svc = await startServiceProcess({ strayFd: STRAY_FD });
});
afterAll(async () => {
  await svc?.close();
});

/** The pids on the host holding `link` (`socket:[ino]`) open, with whether each is in the host's pid namespace. */
function holdersOf(link: string): Array<{ pid: number; host: boolean; cmd: string }> {
  const hostPidNs = fs.readlinkSync("/proc/self/ns/pid");
  const out: Array<{ pid: number; host: boolean; cmd: string }> = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fds = fs.readdirSync(`/proc/${name}/fd`);
      if (!fds.some((fd) => safeReadlink(`/proc/${name}/fd/${fd}`) === link)) continue;
      out.push({
        pid: Number(name),
        host: fs.readlinkSync(`/proc/${name}/ns/pid`) === hostPidNs,
        cmd: fs.readFileSync(`/proc/${name}/cmdline`, "latin1").split("\0")[0] ?? "",
      });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function safeReadlink(p: string): string {
  try {
    return fs.readlinkSync(p);
  } catch {
    return "";
  }
}

it("gives a sandbox none of the descriptors its service was started with", async () => {
  const stray = svc.stray;
  if (stray === undefined) throw new Error("the service was started without its stray descriptor");
  // The service itself holds it: the test's premise.
  expect(holdersOf(stray).map((h) => h.pid)).toContain(svc.pid);
  const sbx = await createSandbox(svc);
  // A command left running in the sandbox, beside the agent and its spawner.
  const bg = await runThroughProxy(
    svc,
    sbx.sandboxID,
    "nohup sleep 60 >/dev/null 2>&1 & echo started",
  );
  expect(bg.stdout.trim()).toBe("started");
  // The host spawner's child of a launch under way (a warm-pool refill) is in the new pid namespace
  // before it execs bwrap: it holds the descriptor until that exec, which closes it.
  const beforeExec = (h: { cmd: string }) => path.basename(h.cmd) === "host-spawner";
  expect(holdersOf(stray).filter((h) => !h.host && !beforeExec(h))).toEqual([]);
});
