/**
 * Open files are bounded per sandbox by its memory limit (issue 18): every
 * open file's kernel structures are charged to the sandbox's memory cgroup,
 * so a sandbox opening files in many processes (each within its
 * RLIMIT_NOFILE of 4096) stops far short of what those limits alone allow,
 * while a neighbour still opens files and the host's table keeps its size.
 */
import * as fs from "node:fs/promises";
import { createTestRuntime, runInSandbox, sandboxSpec, type TestRuntime } from "../support/runtime";
import type { RuntimeSandbox } from "../../src/local/runtime/types";

jest.setTimeout(180_000);

const MEMORY_MB = 128;
/** Files per process: under RLIMIT_NOFILE. */
const PER_PROCESS = 4000;
/**
 * Files the sandbox tries to hold: what 1024 pids × 4096 descriptors would
 * let it reach, capped at one per 100 bytes of its memory (an open file
 * costs about 200 bytes of kernel memory, so the cap is out of reach).
 */
const TARGET = Math.floor((MEMORY_MB * 1024 * 1024) / 100);

let t: TestRuntime;
let hog: RuntimeSandbox;
let neighbour: RuntimeSandbox;

beforeAll(async () => {
  t = await createTestRuntime();
  hog = await t.runtime.start(sandboxSpec(t, "ofhog", { memoryMB: MEMORY_MB }));
  neighbour = await t.runtime.start(sandboxSpec(t, "ofnbr"));
});
afterAll(async () => {
  await t?.dispose();
});

/**
 * Forks processes that each open {@link PER_PROCESS} descriptors of
 * /dev/null and keep them, printing how many the live ones hold after each,
 * until {@link TARGET}, or until one of them dies (the memory cgroup's OOM
 * killer takes them first) or fails to open or fork.
 */
const HOG = `python3 -c '
import os, time
held = {}
while sum(held.values()) < ${TARGET}:
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError as e:
        print("fork", e.errno, flush=True); break
    if pid == 0:
        os.close(r); os.close(1); os.close(2); n = 0
        # The OOM killer takes these first, not the agent nor this loop.
        with open("/proc/self/oom_score_adj", "w") as f: f.write("1000")
        try:
            while n < ${PER_PROCESS}: os.open("/dev/null", os.O_RDONLY); n += 1
        except OSError: pass
        os.write(w, str(n).encode()); os.close(w)
        time.sleep(120); os._exit(0)
    os.close(w)
    got = os.read(r, 32); os.close(r)
    if got: held[pid] = int(got)
    dead = [p for p in held if os.waitpid(p, os.WNOHANG)[0] != 0]
    for p in dead: del held[p]
    print("held", sum(held.values()), flush=True)
    if not got or dead or int(got) < ${PER_PROCESS}: break
'`;

it("stops a sandbox opening files in many processes at its memory limit, while the neighbour still opens files", async () => {
  const fileMax = await fs.readFile("/proc/sys/fs/file-max", "utf8");
  const r = await runInSandbox(hog.agentSocket, HOG, { timeoutMs: 150_000 });
  const counts = [...r.stdout.matchAll(/^held (\d+)$/gm)].map((m) => Number(m[1]));
  // The most it held at once (its last figure is after the OOM killer took some back).
  const held = Math.max(0, ...counts);
  // It opened a good many files in many processes (more than one RLIMIT_NOFILE's worth)...
  expect(held).toBeGreaterThan(10 * PER_PROCESS);
  // ...but was stopped by its memory, far from what pids × RLIMIT_NOFILE allow.
  expect(held).toBeLessThan(TARGET);
  expect(held).toBeLessThan((MEMORY_MB * 1024 * 1024) / 150);
  // The neighbour opens files as usual, and the host's table is as it was.
  const other = await runInSandbox(
    neighbour.agentSocket,
    `python3 -c 'import os; print(len([os.open("/dev/null", os.O_RDONLY) for _ in range(1000)]))'`,
  );
  expect(other.stdout).toBe("1000\n");
  expect(await fs.readFile("/proc/sys/fs/file-max", "utf8")).toBe(fileMax);
});
