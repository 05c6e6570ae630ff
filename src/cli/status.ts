/**
 * `sandbox-iac status`: the service the environment points at and what it
 * holds (sandboxes, templates and their builds, with their state), for a
 * person without an SDK at hand.
 *
 * @module
 */
import { createControlClient } from "../client/control";
import { resolveConfig } from "../config";

function table(rows: string[][]): string {
  if (rows.length === 0) return "  (none)\n";
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return (
    rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i])).join("  ")}`.trimEnd()).join("\n") +
    "\n"
  );
}

/** The status text of the service the environment points at; throws when it cannot be reached. */
export async function statusText(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = resolveConfig({ env, log: () => undefined });
  const client = createControlClient({ config, log: () => undefined });
  const sandboxes = [];
  for await (const s of client.listSandboxesV2({ state: ["running", "paused"] })) sandboxes.push(s);
  const templates = await client.listTemplates();
  const builds = [];
  for (const t of templates) {
    const detail = await client.getTemplate(t.templateID);
    for (const b of detail.template.builds) builds.push({ template: t, build: b });
  }
  const name = (t: { names?: string[]; aliases?: string[]; templateID: string }) =>
    t.names?.[0] ?? t.aliases?.[0] ?? t.templateID;
  return (
    `service: ${config.apiUrl} (${config.source.apiUrl === "default" ? "the local default" : `from ${config.source.apiUrl}`})\n` +
    `\nsandboxes (${sandboxes.length}):\n` +
    table(
      sandboxes.map((s) => [
        s.sandboxID,
        s.state,
        s.alias ?? s.templateID,
        `started ${s.startedAt}`,
      ]),
    ) +
    `\ntemplates (${templates.length}):\n` +
    table(templates.map((t) => [t.templateID, name(t), t.buildStatus, `build ${t.buildID}`])) +
    `\nbuilds (${builds.length}):\n` +
    table(
      builds.map(({ template, build }) => [
        build.buildID,
        build.status,
        name(template),
        `created ${build.createdAt}`,
      ]),
    )
  );
}
