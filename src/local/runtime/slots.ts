/**
 * Slots: what each running sandbox holds exclusively on the host (a host
 * uid/gid range, a /30 link and a veth name). Several services (and test
 * files) may run at once, so a slot is claimed across processes with an
 * atomic `mkdir` under {@link SLOTS_DIR}; a claim whose service died (kill -9)
 * is taken back by the next service that starts or looks for a slot.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { pidAlive } from "./pid-alive";
import { MAX_SLOTS, SANDBOX_ID_BASE, SANDBOX_ID_RANGE, SLOTS_DIR, VETH_PREFIX } from "./constants";

/** One claimed slot and what it gives its sandbox. */
export interface Slot {
  index: number;
  /** Host uid and gid of root inside; inside id `n` is host `idBase + n`. */
  idBase: number;
  /** Host-side veth name. */
  veth: string;
  /** Host address of the link (`10.200.x.y+1`). */
  hostAddress: string;
  /** The sandbox's address (`10.200.x.y+2`), where the proxy reaches its ports. */
  sandboxAddress: string;
}

/** The slot `index` (no claim made). */
function slotAt(index: number): Slot {
  const net = index * 4;
  const prefix = `10.200.${net >> 8}.`;
  return {
    index,
    idBase: SANDBOX_ID_BASE + index * SANDBOX_ID_RANGE,
    veth: `${VETH_PREFIX}${index}`,
    hostAddress: `${prefix}${(net & 255) + 1}`,
    sandboxAddress: `${prefix}${(net & 255) + 2}`,
  };
}

async function ownerOf(dir: string): Promise<number | undefined> {
  const text = await fs.readFile(path.join(dir, "owner"), "utf8").catch(() => undefined);
  const pid = Number(text?.split(" ")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Where this process's next claim starts looking: right after its last
 * claim, so that with hundreds of live sandboxes (slots are shared by every
 * service of the host) a claim does not re-check each taken slot from 0.
 */
let nextHint = 0;

/**
 * Claims a free slot for `sandboxID`, looking from just after this process's
 * last claim and wrapping around. A claim directory without an owner file is
 * being written by another process and is left alone.
 */
export async function claimSlot(sandboxID: string): Promise<Slot> {
  await fs.mkdir(SLOTS_DIR, { recursive: true, mode: 0o700 });
  for (let n = 0; n < MAX_SLOTS; n++) {
    const i = (nextHint + n) % MAX_SLOTS;
    const dir = path.join(SLOTS_DIR, String(i));
    try {
      await fs.mkdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = await ownerOf(dir);
      if (owner === undefined || pidAlive(owner)) continue;
      // A dead service's claim: take it over atomically (rename wins once).
      const grave = `${dir}.stale-${process.pid}-${Date.now()}`;
      if (
        !(await fs.rename(dir, grave).then(
          () => true,
          () => false,
        ))
      )
        continue;
      await fs.rm(grave, { recursive: true, force: true });
      if (
        !(await fs.mkdir(dir).then(
          () => true,
          () => false,
        ))
      )
        continue;
    }
    await fs.writeFile(path.join(dir, "owner"), `${process.pid} ${sandboxID}\n`);
    nextHint = (i + 1) % MAX_SLOTS;
    return slotAt(i);
  }
  throw new SandboxIacError(
    "unavailable",
    `all ${MAX_SLOTS} sandbox slots of this host are in use: stop or pause sandboxes first`,
    { operation: "runtime.start", resourceId: sandboxID },
  );
}

/** Gives the slot back. */
export async function releaseSlot(slot: Slot): Promise<void> {
  await fs.rm(path.join(SLOTS_DIR, String(slot.index)), { recursive: true, force: true });
}

/**
 * The sandbox ids of the slot claims whose owner process is alive: each
 * sandbox of a live service is among them from before its cgroup is made
 * until after it is removed. A claim still being written names none.
 */
export async function sandboxesOfLiveClaims(): Promise<Set<string>> {
  const names = await fs.readdir(SLOTS_DIR).catch(() => [] as string[]);
  const live = new Set<string>();
  for (const name of names.filter((n) => /^\d+$/.test(n))) {
    const text = await fs
      .readFile(path.join(SLOTS_DIR, name, "owner"), "utf8")
      .catch(() => undefined);
    const [pidText, sandboxID] = (text ?? "").trim().split(" ");
    const pid = Number(pidText);
    if (sandboxID && Number.isInteger(pid) && pid > 0 && pidAlive(pid)) live.add(sandboxID);
  }
  return live;
}

/** Slots claimed by services that are gone (kill -9); their claims are removed. */
export async function reclaimDeadSlots(): Promise<Slot[]> {
  const names = await fs.readdir(SLOTS_DIR).catch(() => [] as string[]);
  const dead: Slot[] = [];
  for (const name of names) {
    const dir = path.join(SLOTS_DIR, name);
    if (!/^\d+$/.test(name)) {
      if (name.includes(".stale-")) await fs.rm(dir, { recursive: true, force: true });
      continue;
    }
    const owner = await ownerOf(dir);
    if (owner === undefined || pidAlive(owner)) continue;
    await fs.rm(dir, { recursive: true, force: true });
    dead.push(slotAt(Number(name)));
  }
  return dead;
}
