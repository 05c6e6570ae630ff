/**
 * Warm-pool members get their `/init` during their warm-up, from the last
 * create of their key (src/local/control/sandboxes/pre-init.ts): whatever a
 * member was sent, each create's commands see exactly its own sandbox's
 * variables, user, workdir and token.
 */
import { readFileSync } from "node:fs";
import { Sandbox } from "e2b";
import { sandboxPaths } from "../../src/local/runtime/paths";
import { sdk } from "../templates/util";
import { createSandbox, runThroughProxy } from "./support";
import { eventually } from "../support/eventually";
import { connectionOpts, useService, type TestService } from "../support/service";

const lines: string[] = [];
let svc: TestService;
useService((s) => (svc = s), { log: (line) => lines.push(line) });

/**
 * Runs `create`, then waits until the pool has warmed up the member that
 * replaces the one it claimed. The pool keeps 2 ready and hands out the
 * oldest first: after two such creates, the next one claims a member warmed
 * up after the first of them.
 */
async function thenRefill<T>(create: () => Promise<T>): Promise<T> {
  const from = lines.length;
  const created = await create();
  await eventually(() => lines.slice(from).some((line) => /^warm pool: \S+ ready in/.test(line)), {
    timeoutMs: 60_000,
  });
  return created;
}

/** Creates a sandbox through the SDK, then waits for its refill ({@link thenRefill}). */
function createThenRefill(envs: Record<string, string> = {}): Promise<Sandbox> {
  return thenRefill(() => Sandbox.create({ ...connectionOpts(svc), timeoutMs: 120_000, envs }));
}

/** Its id, the variable `name` (or "none"), user and workdir, as its first command sees them. */
async function seen(sbx: Sandbox, name: string): Promise<string> {
  const result = await sbx.commands.run(
    `echo "$E2B_SANDBOX_ID ${"${"}${name}:-none} $(whoami) $PWD"`,
  );
  return result.stdout.trim();
}

describe("warm-pool members initialised during their warm-up", () => {
  it("runs each create's first command with its own sandbox id, user and workdir", async () => {
    for (let i = 0; i < 3; i++) {
      const sbx = await createThenRefill();
      expect(await seen(sbx, "FOO")).toBe(`${sbx.sandboxId} none user /home/user`);
      await sbx.kill();
    }
  });

  it("gives a create its own variables, and none of them to the sandboxes created after it", async () => {
    await (await createThenRefill()).kill();
    await (await createThenRefill()).kill();
    const own = await createThenRefill({ SECRET_OF_ONE: "s1" });
    expect(await seen(own, "SECRET_OF_ONE")).toBe(`${own.sandboxId} s1 user /home/user`);
    await own.kill();
    for (let i = 0; i < 2; i++) {
      const next = await createThenRefill();
      expect(await seen(next, "SECRET_OF_ONE")).toBe(`${next.sandboxId} none user /home/user`);
      await next.kill();
    }
  });

  it("enforces no token in a sandbox that is not secure, claimed after secure creates", async () => {
    // The SDK's creates are secure (the v2 route); the control API's take `secure`.
    for (let i = 0; i < 2; i++) await thenRefill(() => createSandbox(svc, { secure: true }));
    const open = await thenRefill(() => createSandbox(svc, { secure: false }));
    expect(open.envdAccessToken).toBeUndefined();
    const run = await runThroughProxy(svc, open.sandboxID, "echo $E2B_SANDBOX_ID");
    expect(run).toMatchObject({ status: 200, stdout: `${open.sandboxID}\n`, exitCode: 0 });
  });

  it("enforces its token in a secure sandbox, claimed after creates that were not secure", async () => {
    for (let i = 0; i < 2; i++) await thenRefill(() => createSandbox(svc, { secure: false }));
    const secured = await thenRefill(() => createSandbox(svc, { secure: true }));
    expect((await runThroughProxy(svc, secured.sandboxID, "true")).status).toBe(401);
    const run = await runThroughProxy(
      svc,
      secured.sandboxID,
      "echo $E2B_SANDBOX_ID",
      secured.envdAccessToken,
    );
    expect(run).toMatchObject({ status: 200, stdout: `${secured.sandboxID}\n`, exitCode: 0 });
  });
});

/**
 * The connections open to `sandboxID`'s agent: the sockets its listening
 * socket accepted that are still connected (`/proc/net/unix`, state 03).
 */
function agentConnections(sandboxID: string): number {
  const { socket } = sandboxPaths(svc.dataDir, sandboxID);
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[7] === socket && fields[5] === "03").length;
}

describe("the service's connections to a warm-pool member's agent", () => {
  it("relays a create's first commands over the connection the member's warm-up opened", async () => {
    // GIVEN a member whose /init and warm-up command ran moments before its claim (the pool
    // hands out the older of its 2: after two creates and their refills, the first refill)
    for (let i = 0; i < 2; i++) await (await createThenRefill()).kill();
    const sbx = await Sandbox.create({ ...connectionOpts(svc), timeoutMs: 120_000 });
    // WHEN the create's client runs its first commands (relayed by the service)
    for (let i = 0; i < 3; i++) expect((await sbx.commands.run("true")).exitCode).toBe(0);
    // THEN the agent holds the one connection they all went over, not one more for the relay
    expect(agentConnections(sbx.sandboxId)).toBe(1);
    await sbx.kill();
  });
});

describe("warm-pool members of templates that share their layers", () => {
  it("never hands a member warmed with one template's variables to another template's create", async () => {
    // GIVEN a template of base's layers (ENV alone) whose variable only its own sandboxes may see
    const marker = `only-in-template-a-${Date.now()}`;
    const built = await sdk(svc, "build-envs", "env-only-a", JSON.stringify({ TPL_MARK: marker }));
    expect(built).toMatchObject({ ok: true });
    // AND members warmed up since its creates, as its creates initialised them
    const opts = { ...connectionOpts(svc), timeoutMs: 120_000 };
    for (let i = 0; i < 3; i++) {
      const a = await thenRefill(() => Sandbox.create("env-only-a", opts));
      expect(await seen(a, "TPL_MARK")).toBe(`${a.sandboxId} ${marker} user /home/user`);
      await a.kill();
    }
    // WHEN base, of the same layers, is created
    const b = await Sandbox.create(opts);
    // THEN neither its commands nor its agent's memory ever held the other template's variable
    expect(await seen(b, "TPL_MARK")).toBe(`${b.sandboxId} none user /home/user`);
    // (hex: the command itself reaches the agent's memory)
    const hex = Buffer.from(marker).toString("hex");
    const found = await b.commands.run(`python3 -c '${AGENT_MEMORY_SEARCH}' ${hex}`, {
      user: "root",
    });
    expect(found.stdout.trim()).toBe("searched agent memory: not found");
    await b.kill();
  });
});

/**
 * Searches the memory of the sandbox's agent (the process whose argv[0] is
 * its Node) for the bytes argv[1] gives in hex, as root code in the sandbox
 * can: every readable mapping of /proc/<agent>/mem.
 */
const AGENT_MEMORY_SEARCH = [
  "import os, re, sys",
  "needle = bytes.fromhex(sys.argv[1])",
  'pids = [p for p in os.listdir("/proc") if p.isdigit() and open("/proc/%s/cmdline" % p, "rb").read().startswith(b"/.sandbox-iac/node\\0")]',
  "hits = 0",
  "for pid in pids:",
  '  mem = open("/proc/%s/mem" % pid, "rb", 0)',
  '  for line in open("/proc/%s/maps" % pid):',
  '    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)',
  "    if not m: continue",
  "    try:",
  "      mem.seek(int(m.group(1), 16)); hits += mem.read(int(m.group(2), 16) - int(m.group(1), 16)).count(needle)",
  "    except OSError: pass",
  'print("searched agent memory: " + ("found" if hits else "not found") if pids else "no agent")',
].join("\n");
