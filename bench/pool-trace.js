// What the warm pool did for each create of bench:local's loop, read from the
// service's log: whether the create got a ready member, waited for a start
// under way, or started its own sandbox, beside its time. This is what tells a
// slow create's cause apart (the loop's p95 is a handful of creates).
//
// Every build logs each sandbox start ("sandbox <id>: ... ms since start: ...,
// agent N" after GET /health, with the service's ISO timestamp in front), so a
// create is classed from times alone: its sandbox answered /health before the
// create began (ready), started before it but answered after (waited), or
// started after (cold). Builds whose pool logs its claims ("warm pool: claimed
// <id> ready (age ..)" / "after waiting N ms" / "claim missed") and its
// members' readiness ("warm pool: <id> ready in N ms (start A, warm-up B")
// give the exact class, the wait, and each refill's start and warm-up.
"use strict";
const fs = require("node:fs");
const { percentile, ms } = require("./stats");

/** The log's lines from `fromByte`, each with its timestamp (ms since the epoch). */
function logLines(logFile, fromByte) {
  return fs
    .readFileSync(logFile, "utf8")
    .slice(fromByte)
    .split("\n")
    .map((line) => {
      const m = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) (.*)$/.exec(line);
      return m ? { at: Date.parse(m[1]), text: m[2] } : undefined;
    })
    .filter(Boolean);
}

/**
 * Classes each create `{ id, startedAt, total }` of the loop from the log:
 * returns the creates with `kind` ("ready", "waited", "cold" or "?") and
 * `waitedMs` where known, and the pool's refills `{ startMs, warmUpMs }`.
 */
function traceCreates(logFile, fromByte, creates) {
  const starts = new Map();
  const claims = new Map();
  const refills = [];
  // A member claimed early in the loop may have started before it: its start is read from the whole log.
  for (const { at, text } of logLines(logFile, 0)) {
    const m = /^sandbox (\S+): pid .*ms since start: .*\bagent (\d+)/.exec(text);
    if (m) starts.set(m[1], { healthAt: at, startAt: at - Number(m[2]) });
  }
  const created = [];
  for (const { text } of logLines(logFile, fromByte)) {
    let m = /^sandbox \S+: created, claim (\d+) ms \(warm\), boot (\d+) ms, state (\d+) ms/.exec(
      text,
    );
    if (m) created.push({ claimMs: Number(m[1]), bootMs: Number(m[2]), stateMs: Number(m[3]) });
    m = /^warm pool: claimed (\S+) ready \(age (\d+) ms/.exec(text);
    if (m) claims.set(m[1], { kind: "ready", ageMs: Number(m[2]) });
    m = /^warm pool: claimed (\S+) warming up/.exec(text);
    if (m) claims.set(m[1], { kind: "warming" });
    m = /^warm pool: claimed (\S+) after waiting (\d+) ms/.exec(text);
    if (m) claims.set(m[1], { kind: "waited", waitedMs: Number(m[2]) });
    m = /^warm pool: \S+ ready in (\d+) ms \(start (\d+), warm-up (\d+)/.exec(text);
    if (m) refills.push({ readyMs: Number(m[1]), startMs: Number(m[2]), warmUpMs: Number(m[3]) });
  }
  const classed = creates.map((c) => {
    const claim = claims.get(c.id);
    if (claim) return { ...c, ...claim };
    const s = starts.get(c.id);
    if (!s) return { ...c, kind: "?" };
    // The log's clock has ms precision like Date.now(): equal counts as before.
    if (s.healthAt <= c.startedAt) return { ...c, kind: "ready" };
    if (s.startAt < c.startedAt)
      return { ...c, kind: "waited", waitedMs: s.healthAt - c.startedAt };
    return { ...c, kind: "cold" };
  });
  return { creates: classed, refills, created };
}

/** Lines for bench:local: the counts per class, the refills, and the slowest creates. */
function poolTraceLines({ creates, refills, created }) {
  const count = (kind) => creates.filter((c) => c.kind === kind);
  // Each class with its count and the p50 of its create -> first command.
  const klass = (kind, label) => {
    const of = count(kind);
    return `${of.length} ${label}${
      of.length
        ? ` (p50 ${ms(
            percentile(
              of.map((c) => c.total),
              50,
            ),
          )})`
        : ""
    }`;
  };
  const waited = count("waited");
  const lines = [
    `  warm pool over the loop: ${klass("ready", "ready")}, ${klass("warming", "warming up")}, ${klass("waited", "waited for a start")}` +
      (waited.length
        ? ` (wait p50 ${ms(
            percentile(
              waited.map((c) => c.waitedMs),
              50,
            ),
          )}, max ${ms(Math.max(...waited.map((c) => c.waitedMs)))})`
        : "") +
      `, ${klass("cold", "cold")}, ${count("?").length} unknown` +
      (refills.length
        ? `; ${refills.length} refills: start p50 ${ms(
            percentile(
              refills.map((r) => r.startMs),
              50,
            ),
          )}, warm-up p50 ${ms(
            percentile(
              refills.map((r) => r.warmUpMs),
              50,
            ),
          )}`
        : ""),
  ];
  // Builds that log a create's own phases on the service: the claim, the agent's /init, the state file.
  if (created.length) {
    const p50 = (key) =>
      ms(
        percentile(
          created.map((c) => c[key]),
          50,
        ),
      );
    lines.push(
      `  a warm create on the service, p50 of ${created.length}: claim ${p50("claimMs")}, boot (/init) ${p50("bootMs")}, state file and first sample ${p50("stateMs")}`,
    );
  }
  const slowest = [...creates].sort((a, b) => b.total - a.total).slice(0, 5);
  lines.push(
    "  slowest creates (create + first command = create call + command, pool): " +
      slowest
        .map(
          (c) =>
            `#${c.index} ${c.total.toFixed(0)} = ${c.createCall.toFixed(0)} + ${c.firstRun.toFixed(0)} ms ${c.kind}` +
            (c.waitedMs !== undefined ? ` ${c.waitedMs.toFixed(0)} ms` : ""),
        )
        .join("; "),
  );
  return lines;
}

module.exports = { traceCreates, poolTraceLines };
