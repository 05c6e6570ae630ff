// What the soak knows: every sandbox, volume file, snapshot and template whose
// call returned success (acknowledged), what a crash may or may not have
// done (uncertain: the call was cut off), and every problem the checks found.
"use strict";
const { createHash } = require("node:crypto");

/** Hex SHA-256 of bytes. */
function sha256(data) {
  return createHash("sha256").update(data).digest("hex");
}

/** A small seeded PRNG (mulberry32), so that a run's choices can be repeated. */
function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Ledger {
  constructor(random) {
    this.random = random;
    /** id -> { id, tag, token, files: Map<path, sha>, state, sbx, gen, leased, mount? } */
    this.sandboxes = new Map();
    /** Sandboxes whose kill was acknowledged. */
    this.killed = new Set();
    /** Metadata tags of creates cut off: the sandbox may exist. */
    this.uncertainCreates = new Set();
    /** Sandboxes whose kill was cut off: they may still exist. */
    this.uncertainKills = new Set();
    /** id -> { id, name, token, files: Map<path, sha> } */
    this.volumes = new Map();
    /** snapshotID -> { id, name, files: Map<path, sha> } */
    this.snapshots = new Map();
    /** Names of snapshots whose create or delete was cut off. */
    this.uncertainSnapshots = new Set();
    /** name -> { name, templateID, files: Map<path, sha> } */
    this.templates = new Map();
    /** Names of templates whose build or delete was cut off. */
    this.uncertainTemplates = new Set();
    /** Writes cut off: absent or complete, never torn. { kind: 'sandbox'|'volume', id, path, sha } */
    this.maybeFiles = [];
    this.problems = {
      lostWrites: [],
      tornWrites: [],
      lostSandboxes: [],
      duplicatedSandboxes: [],
      notPausedAfterRestart: [],
    };
    this.counter = 0;
    /** Creates in flight. */
    this.creating = 0;
    /** Op kinds of which one runs at a time (snapshots, builds: keeps their count at the maximum). */
    this.busy = new Set();
  }

  /** Runs `fn` unless an op of `kind` is running; `false` (skipped) then. */
  async alone(kind, fn) {
    if (this.busy.has(kind)) return false;
    this.busy.add(kind);
    try {
      return await fn();
    } finally {
      this.busy.delete(kind);
    }
  }

  /** A new name unique in the run. */
  next(prefix) {
    this.counter += 1;
    return `${prefix}-${this.counter}`;
  }

  pick(items) {
    return items[Math.floor(this.random() * items.length)];
  }

  /** Leases a random known sandbox that is free and matches `pred`; `undefined` when none. */
  lease(pred = () => true) {
    const free = [...this.sandboxes.values()].filter((b) => !b.leased && pred(b));
    if (free.length === 0) return undefined;
    const box = this.pick(free);
    box.leased = true;
    return box;
  }

  release(box) {
    if (box) box.leased = false;
  }

  addSandbox(box) {
    this.sandboxes.set(box.id, { files: new Map(), state: "running", leased: false, ...box });
  }

  problem(kind, text) {
    this.problems[kind].push(text);
  }
}

module.exports = { Ledger, sha256, seededRandom };
