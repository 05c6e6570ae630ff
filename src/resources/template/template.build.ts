/**
 * One template build, as the SDK runs it (docs/control-api.md#build-flow): upload the
 * COPY archives the service lacks, start the build, then follow its status,
 * streaming each log entry as it arrives.
 *
 * @module
 */
import { setTimeout as sleep } from "node:timers/promises";
import { SandboxIacError } from "../../errors";
import type { ResourceContext } from "../core/lifecycle";
import type { BuildLogEntry, TemplateBuildStartV2 } from "../../client/control";
import type { TemplateControl } from "../core/template-control";
import { spoolCopyArchive } from "./template.files";
import type { ResolvedCopy } from "./template.steps";

/** The SDK polls every 200 ms; so do we. */
const POLL_INTERVAL_MS = 200;
/** How many log entries a build failure quotes. */
const LOG_TAIL = 10;

/**
 * Renders a build log entry as one line, without the service's timestamp:
 * every adapter's log already stamps the line (terraform prints one per line).
 */
function formatLogEntry(entry: BuildLogEntry): string {
  const step = entry.step ? ` [${entry.step}]` : "";
  return `${entry.level}${step} ${entry.message}`;
}

/**
 * Uploads the archives of `copies` that the service does not hold yet, one at a
 * time (each is spooled to disk, so one at a time bounds the disk use too).
 */
export async function uploadMissingFiles(
  control: TemplateControl,
  templateID: string,
  copies: readonly ResolvedCopy[],
  ctx: ResourceContext,
): Promise<void> {
  const seen = new Set<string>();
  for (const copy of copies) {
    if (seen.has(copy.hash)) continue;
    seen.add(copy.hash);
    const link = await control.fileUploadLink(templateID, copy.hash);
    if (link.present || !link.url) {
      ctx.log(`skipping upload of ${copy.source.src}: already cached`);
      continue;
    }
    const archive = await spoolCopyArchive(copy.source);
    try {
      ctx.log(`uploading ${copy.source.src} (${archive.size} bytes)`);
      await control.uploadFiles(link.url, archive);
    } finally {
      await archive.cleanup();
    }
  }
}

/**
 * Starts build `buildID` of `templateID` and waits for it to end, sending each
 * log entry to `ctx.log`. A build that ends in `error` throws `build_failed`
 * with the reason, the failing step and the tail of the log.
 */
export async function buildAndWait(
  control: TemplateControl,
  ids: { templateID: string; buildID: string; name: string },
  body: TemplateBuildStartV2,
  ctx: ResourceContext,
): Promise<void> {
  await control.startBuild(ids.templateID, ids.buildID, body);
  const tail: BuildLogEntry[] = [];
  let offset = 0;
  for (;;) {
    const info = await control.buildStatus(ids.templateID, ids.buildID, offset);
    for (const entry of info.logEntries) {
      ctx.log(formatLogEntry(entry));
      tail.push(entry);
      if (tail.length > LOG_TAIL) tail.shift();
    }
    offset += info.logEntries.length;
    if (info.status === "ready") return;
    if (info.status === "error") {
      const reason = info.reason?.message ?? "the service gave no reason";
      const step = info.reason?.step !== undefined ? ` at step ${info.reason.step}` : "";
      const quoted = tail.map((e) => `  ${e.message}`).join("\n");
      throw new SandboxIacError(
        "build_failed",
        `the build of template ${JSON.stringify(ids.name)} failed${step}: ${reason}` +
          (quoted ? `\nlast log lines:\n${quoted}` : "") +
          "\nfix the failing step in build.steps and run again",
        { operation: "templates.build", resourceId: `${ids.templateID}/${ids.buildID}` },
      );
    }
    await sleep(POLL_INTERVAL_MS, undefined, { signal: ctx.signal }).catch((err: unknown) => {
      throw new SandboxIacError("canceled", "waiting for the template build was aborted", {
        operation: "templates.build",
        resourceId: `${ids.templateID}/${ids.buildID}`,
        cause: err,
      });
    });
  }
}
