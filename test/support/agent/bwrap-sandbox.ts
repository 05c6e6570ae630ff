/**
 * Test helper: runs the bundled agent inside a hand-made bubblewrap sandbox
 * (own mount/PID/IPC/UTS namespaces, an overlay root with a `user` account),
 * the way the runtime will, until `src/local/runtime` can be used instead.
 *
 * Requires root, bwrap, overlayfs and a built bundle (`node scripts/bundle-agent.js`).
 *
 * @module
 */
import { eventually } from "../eventually";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../../src/errors";
import { agentBundleDirOnHost } from "../../../src/local/agent-launch";
import {
  AGENT_BUNDLE_IN_SANDBOX,
  AGENT_MOUNT_DIR,
  AGENT_NODE_IN_SANDBOX,
  AGENT_RUN_DIR_IN_SANDBOX,
  AGENT_SOCKET_IN_SANDBOX,
} from "../../../src/wire/sandbox-paths";
import { shellWord } from "../../../src/wire/shell-word";

/** A running test sandbox. */
export interface TestSandbox {
  /** Host path of the agent's socket. */
  socketPath: string;
  /** Host path of the overlay's upper (writable) layer: what the sandbox wrote. */
  upperDir: string;
  /** Kills the sandbox and removes its directories. */
  stop(): Promise<void>;
}

const PASSWD = "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n";
const GROUP = "root:x:0:\nuser:x:1000:\n";
/** Longest wait for a live agent to answer /health (the default jest hook timeout is 120 s). */
const HEALTH_WITHIN_MS = 60_000;

function makeLowerLayer(lower: string): void {
  fs.mkdirSync(path.join(lower, "etc"), { recursive: true });
  fs.writeFileSync(path.join(lower, "etc", "passwd"), PASSWD);
  fs.writeFileSync(path.join(lower, "etc", "group"), GROUP);
  fs.mkdirSync(path.join(lower, "home", "user"), { recursive: true });
  fs.chownSync(path.join(lower, "home", "user"), 1000, 1000);
  fs.mkdirSync(path.join(lower, "root"), { mode: 0o700 });
  fs.mkdirSync(path.join(lower, "tmp"));
  fs.chmodSync(path.join(lower, "tmp"), 0o1777);
  for (const d of ["usr", "proc", "dev", "run/sandbox-iac", `${AGENT_MOUNT_DIR.slice(1)}/agent`]) {
    fs.mkdirSync(path.join(lower, d), { recursive: true });
  }
  fs.writeFileSync(path.join(lower, AGENT_NODE_IN_SANDBOX.slice(1)), "");
  for (const d of ["bin", "lib", "lib64", "sbin"]) fs.symlinkSync(`usr/${d}`, path.join(lower, d));
}

function healthy(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ socketPath, path: "/health", method: "GET" }, (res) => {
      res.resume();
      resolve(res.statusCode === 204);
    });
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** Starts the agent bundle in a fresh sandbox and waits until it answers `/health`. */
export async function startTestSandbox(): Promise<TestSandbox> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "agent-sbx-"));
  const [lower, upper, work, merged, run] = ["lower", "upper", "work", "merged", "run"].map((d) => {
    const p = path.join(base, d);
    fs.mkdirSync(p);
    return p;
  }) as [string, string, string, string, string];
  makeLowerLayer(lower);
  const bundleDir = agentBundleDirOnHost();
  if (!fs.existsSync(path.join(bundleDir, "agent.js"))) {
    throw new SandboxIacError(
      "internal",
      `no agent bundle in ${bundleDir}: run node scripts/bundle-agent.js`,
      {
        operation: "agent.testSandbox",
      },
    );
  }
  const bwrap = [
    "bwrap",
    "--bind",
    merged,
    "/",
    "--ro-bind",
    "/usr",
    "/usr",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    "testsbx",
    "--die-with-parent",
    "--ro-bind",
    process.execPath,
    AGENT_NODE_IN_SANDBOX,
    "--ro-bind",
    bundleDir,
    `${AGENT_MOUNT_DIR}/agent`,
    "--bind",
    run,
    AGENT_RUN_DIR_IN_SANDBOX,
    "--chdir",
    "/",
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/bin:/bin",
    AGENT_NODE_IN_SANDBOX,
    AGENT_BUNDLE_IN_SANDBOX,
    "--socket",
    AGENT_SOCKET_IN_SANDBOX,
  ];
  const quoted = bwrap.map(shellWord).join(" ");
  const script = `mount -t overlay overlay -o lowerdir=${lower},upperdir=${upper},workdir=${work} ${merged} && exec ${quoted}`;
  const child: ChildProcess = spawn(
    "unshare",
    ["-m", "--propagation", "private", "sh", "-c", script],
    {
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const socketPath = path.join(run, path.basename(AGENT_SOCKET_IN_SANDBOX));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    fs.rmSync(base, { recursive: true, force: true });
  };
  let dead = false;
  void exited.then(() => (dead = true));
  // Waits while the agent is alive: on a loaded machine its boot took more
  // than 10 s; the bound only keeps a hung agent from outliving the jest hook.
  const up = await eventually(
    async () => dead || (fs.existsSync(socketPath) && (await healthy(socketPath))),
    { timeoutMs: HEALTH_WITHIN_MS, intervalMs: 50 },
  ).catch(() => false);
  if (up && !dead) return { socketPath, upperDir: upper, stop };
  await stop();
  throw new SandboxIacError(
    "internal",
    dead
      ? `the agent exited before answering /health (exit code ${child.exitCode}, signal ${child.signalCode}; its output is above)`
      : `the agent did not answer /health within ${HEALTH_WITHIN_MS} ms`,
    { operation: "agent.testSandbox" },
  );
}
