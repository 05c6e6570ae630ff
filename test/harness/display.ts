/**
 * Renders a {@link HarnessResult} the way `pulumi up` (or `destroy`, `preview`,
 * `refresh`) prints its summary: the resource table with each step's status
 * and duration, the provider's diagnostics under the stack, the outputs, the
 * change counts and the total duration
 * (docs/pulumi-provider.md#what-pulumi-up-shows).
 *
 * @module
 */
import type { Command, HarnessResult, Operation, OperationKind } from "./result";
import { ROOT_STACK_TYPE } from "./urn";

const HEADERS: Record<Command, string> = {
  up: "Updating",
  preview: "Previewing update",
  refresh: "Refreshing",
  destroy: "Destroying",
};

/** The symbol, past-tense status and summary word of each step, as the CLI prints them. */
const STEPS: Record<OperationKind, { symbol: string; status: string; summary: string }> = {
  create: { symbol: "+", status: "created", summary: "created" },
  update: { symbol: "~", status: "updated", summary: "updated" },
  replace: { symbol: "+-", status: "replaced", summary: "replaced" },
  delete: { symbol: "-", status: "deleted", summary: "deleted" },
  same: { symbol: "", status: "", summary: "unchanged" },
  read: { symbol: ">", status: "read", summary: "read" },
  "refresh-update": { symbol: "~", status: "updated", summary: "updated" },
  "refresh-deleted": { symbol: "-", status: "deleted", summary: "deleted" },
};

/** The preview forms of the summary words: nothing has happened yet. */
const PLANNED: Record<string, string> = {
  created: "create",
  updated: "update",
  replaced: "replace",
  deleted: "delete",
};

/** `1.23s`, `12s`, `2m5s`: the CLI's duration style. */
export function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return `${Number(seconds.toFixed(2))}s`;
  if (seconds < 60) return `${Math.round(seconds)}s`;
  return `${Math.floor(seconds / 60)}m${Math.round(seconds % 60)}s`;
}

function statusOf(op: Operation, command: Command): string {
  if (command === "preview") return PLANNED[STEPS[op.op].summary] ?? "";
  const status = STEPS[op.op].status;
  return status && op.durationMs !== undefined
    ? `${status} (${formatDuration(op.durationMs)})`
    : status;
}

/**
 * The steps to show: the delete half of a replacement is folded into its
 * `replace` row, as the CLI shows one row per resource.
 */
function rows(result: HarnessResult): Operation[] {
  const byUrn = new Map<string, Operation>();
  for (const op of result.operations) {
    const seen = byUrn.get(op.urn);
    if (seen?.op === "replace" || (seen && op.op === "delete" && result.run.command === "up")) {
      continue;
    }
    byUrn.set(op.urn, op);
  }
  return [...byUrn.values()];
}

/** The CLI's "-ing" forms of the engine's step names, for a failed step's row. */
const FAILING: Record<string, string> = {
  check: "checking",
  diff: "diffing",
  create: "creating",
  update: "updating",
  replace: "replacing",
  delete: "deleting",
  read: "refreshing",
};

/** The resources whose step failed (engine errors read `<step> of <urn> failed: ...`), with the step. */
function failures(result: HarnessResult): Array<{
  urn: string;
  type: string;
  name: string;
  step: string;
  error: string;
  message: string;
}> {
  return result.errors.flatMap((error) => {
    const m = /^(\w+) of (urn:pulumi:[^ ]+) failed: /.exec(error);
    if (!m) return [];
    const parts = m[2].split("::");
    const [type, name] = [parts[2] ?? "", parts[3] ?? ""];
    return [{ urn: m[2], type, name, step: m[1], error, message: error.slice(m[0].length) }];
  });
}

/**
 * The stack's own step: created with the first `up`, deleted by `destroy`,
 * unchanged otherwise (the harness keeps no stack record; the CLI does).
 */
function stackStep(command: Command, shown: Operation[]): OperationKind {
  if (command === "destroy") return "delete";
  return shown.length > 0 && shown.every((o) => o.op === "create") ? "create" : "same";
}

function table(result: HarnessResult, shown: Operation[]): string[] {
  const { command, project, stack } = result.run;
  const done = new Set(shown.map((op) => op.urn));
  const failed = failures(result).filter((f) => !done.has(f.urn));
  const stackOp: Operation = {
    op: stackStep(command, shown),
    urn: "",
    type: ROOT_STACK_TYPE,
    name: `${project}-${stack}`,
  };
  const n = result.diagnostics.length;
  const info = n > 0 ? `${n} message${n === 1 ? "" : "s"}` : "";
  const lines: [string, string, string, string, string][] = [
    ["", "Type", "Name", "Status", "Info"],
    [STEPS[stackOp.op].symbol, stackOp.type, stackOp.name, statusOf(stackOp, command), info],
    ...[
      ...shown.map((op) => ({ ...op, symbol: STEPS[op.op].symbol, status: statusOf(op, command) })),
      ...failed.map((f) => ({
        ...f,
        symbol: "",
        status: `**${FAILING[f.step] ?? f.step} failed**`,
        info: "1 error",
      })),
    ].map((row, i, all): [string, string, string, string, string] => [
      row.symbol,
      `${i === all.length - 1 ? "└─" : "├─"} ${row.type}`,
      row.name,
      row.status,
      "info" in row ? row.info : "",
    ]),
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...lines.map((l) => l[c].length)));
  return lines.map((l) =>
    ` ${l[0].padEnd(widths[0] + 1)}  ${l
      .slice(1)
      .map((cell, c) => (c < 3 ? cell.padEnd(widths[c + 1]) : cell))
      .join("  ")}`.trimEnd(),
  );
}

function value(v: unknown, indent: string): string {
  const text = JSON.stringify(v, null, 4) ?? "undefined";
  return text.replace(/\n/g, `\n${indent}`);
}

/** The whole summary, as lines of text. */
export function renderResult(result: HarnessResult): string {
  const { command, project, stack, durationMs } = result.run;
  const shown = rows(result);
  const out: string[] = [`${HEADERS[command]} (${stack}):`, "", ...table(result, shown), ""];
  if (result.diagnostics.length > 0 || result.errors.length > 0) {
    const indented = (text: string): string => text.replace(/\n/g, "\n    ");
    const byResource = failures(result);
    out.push("Diagnostics:", `  ${ROOT_STACK_TYPE} (${project}-${stack}):`);
    for (const d of result.diagnostics) out.push(`    ${d.message}`);
    // A step's error is the resource's own diagnostic; others (the program's) are the stack's.
    for (const e of result.errors) {
      if (!byResource.some((f) => f.error === e)) out.push(`    error: ${indented(e)}`);
    }
    out.push("");
    for (const f of byResource) {
      out.push(`  ${f.type} (${f.name}):`, `    error: ${indented(f.message)}`, "");
    }
  }
  const keys = Object.keys(result.outputs).sort();
  if (keys.length > 0) {
    const width = Math.max(...keys.map((k) => k.length));
    out.push("Outputs:");
    for (const key of keys) {
      const shownValue = result.secretOutputs.includes(key)
        ? "[secret]"
        : value(result.outputs[key], " ".repeat(width + 6));
      out.push(`    ${key.padEnd(width)}: ${shownValue}`);
    }
    out.push("");
  }
  const counts = new Map<string, number>();
  for (const op of [{ op: stackStep(command, shown) }, ...shown]) {
    const word = STEPS[op.op].summary;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  out.push("Resources:");
  for (const [word, n] of counts) {
    const symbol = Object.values(STEPS).find((s) => s.summary === word)?.symbol ?? "";
    const verb = command === "preview" && PLANNED[word] ? `to ${PLANNED[word]}` : word;
    out.push(`    ${symbol ? `${symbol} ` : ""}${n} ${verb}`);
  }
  out.push("", `Duration: ${formatDuration(durationMs)}`);
  return out.join("\n");
}
