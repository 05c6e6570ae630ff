/**
 * Bringing sandboxes back from the state file when the service starts, and
 * deleting the writable layers nobody was ever handed.
 *
 * @module
 */
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { z } from "zod";
import { SANDBOXES_DIR } from "../../runtime/constants";
import { removeFilesInUpper } from "../../runtime/disk";
import { sandboxPaths } from "../../runtime/paths";
import type { SandboxRuntime } from "../../runtime/types";
import { NEW_SANDBOX_ID_PATTERN } from "../../../wire/ids";
import { logLevel } from "../../../wire/control-requests";
import { JsonStateWriter, readStateFile } from "../state-file";
import { appendLog } from "./logs";
import type { SandboxRecord } from "./record";

/** Relative path of the state file in the data dir. */
export const SANDBOXES_STATE_FILE = path.join("control", "sandboxes.json");

const optionalText = z.string().optional();
const textMap = z.record(z.string(), z.string());

const sandboxRecordSchema = z.looseObject({
  sandboxID: z.string(),
  templateID: z.string(),
  buildID: optionalText,
  alias: optionalText,
  clientID: z.string(),
  startedAt: z.string(),
  endAt: z.string(),
  state: z.enum(["running", "paused"]),
  cpuCount: z.number(),
  memoryMB: z.number(),
  diskSizeMB: z.number(),
  envdVersion: z.string(),
  secure: z.boolean(),
  allowInternetAccess: z.boolean(),
  network: z
    .looseObject({
      allowOut: z.array(z.string()).optional(),
      denyOut: z.array(z.string()).optional(),
      allowPublicTraffic: z.boolean().optional(),
      rules: z
        .record(
          z.string(),
          z.array(
            z.looseObject({
              transform: z.looseObject({ headers: textMap.exactOptional() }).optional(),
            }),
          ),
        )
        .optional(),
    })
    .optional(),
  autoPause: z.boolean(),
  autoPauseMemory: z.boolean().optional(),
  autoResume: z.boolean(),
  metadata: textMap,
  initEnv: textMap,
  layers: z.array(z.string()),
  defaultUser: z.string(),
  defaultWorkdir: optionalText,
  startCmd: optionalText,
  volumeMounts: z
    .array(
      z.looseObject({
        name: z.string(),
        path: z.string(),
        volumeID: z.string(),
        source: z.string(),
      }),
    )
    .optional(),
  logs: z.array(
    z.looseObject({
      timestamp: z.string(),
      level: logLevel,
      message: z.string(),
      fields: textMap,
    }),
  ),
});

/**
 * control/sandboxes.json as it is read back: {@link SandboxRecord}s, checked.
 * Objects keep keys the schema does not name, so a field a newer service
 * added is not dropped by a restart.
 */
const sandboxesStateSchema: z.ZodType<{ version: 1; sandboxes: SandboxRecord[] }> = z.looseObject({
  version: z.literal(1),
  sandboxes: z.array(sandboxRecordSchema),
});

/** The records of the state file (none before the first write). */
async function readRecords(dataDir: string): Promise<SandboxRecord[]> {
  const state = await readStateFile(path.join(dataDir, SANDBOXES_STATE_FILE), sandboxesStateSchema);
  return state?.sandboxes ?? [];
}

/**
 * The writer of the state file, holding `records()`. No fsync: a create or
 * kill waited 8 ms (p50) to 150 ms (max) for one on a busy disk. The renamed
 * file survives the service being killed (kill -9 included); a power loss
 * takes the sandboxes' unsynced disk images too.
 */
export function sandboxesStateWriter(
  dataDir: string,
  records: () => SandboxRecord[],
): JsonStateWriter {
  return new JsonStateWriter(
    path.join(dataDir, SANDBOXES_STATE_FILE),
    () => ({ version: 1, sandboxes: records() }),
    2,
    { fsync: false },
  );
}

/**
 * Every layer the sandboxes recorded in the state file start from (running,
 * paused or stopped alike): layers a clean-up must keep.
 */
export async function recordedLayers(dataDir: string): Promise<string[]> {
  return (await readRecords(dataDir)).flatMap((r) => r.layers);
}

/**
 * The records of the state file. Sandboxes recorded there lost their
 * processes with the previous service, so they all come back `paused` on
 * their kept layer.
 */
export async function restoreRecords(dataDir: string): Promise<SandboxRecord[]> {
  const now = new Date().toISOString();
  const records = await readRecords(dataDir);
  for (const record of records) {
    if (record.state === "running") {
      await removeAgentTempFiles(dataDir, record.sandboxID);
      record.state = "paused";
      record.endAt = now;
      appendLog(record, "info", "sandbox paused: the service restarted", {});
    }
  }
  return records;
}

/** Name prefix of the agent's temporary files (uploads, compose) next to a user's file. */
const AGENT_TEMP_GLOB = ".sandbox-iac-*";

/**
 * Deletes the temporary files of uploads a crash cut off: the agent writes
 * each upload next to its target and renames it into place when complete, so
 * the user's file is intact and only these hidden halves are left. Only the
 * writable layer in the sandbox's disk image is searched (what the sandbox
 * changed), with one `find`.
 */
async function removeAgentTempFiles(dataDir: string, sandboxID: string): Promise<void> {
  const { disk } = sandboxPaths(dataDir, sandboxID);
  // A disk that is missing or unreadable is left to the resume to report.
  await removeFilesInUpper(disk, AGENT_TEMP_GLOB).catch(() => undefined);
}

/** Options of {@link removeOrphans}. */
export interface RemoveOrphansOptions {
  dataDir: string;
  runtime: SandboxRuntime;
  /** True for a sandbox the state file knows. */
  isKnown: (sandboxID: string) => boolean;
  log: (line: string) => void;
}

/**
 * Deletes writable layers of sandboxes the state file does not know: warm
 * pool members and creates that never answered when the previous service
 * died. Neither was ever handed to a caller.
 */
export async function removeOrphans(opts: RemoveOrphansOptions): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(path.join(opts.dataDir, SANDBOXES_DIR));
  } catch {
    return;
  }
  // Sequential: usually none or a couple (the pool's size).
  for (const name of names) {
    if (!NEW_SANDBOX_ID_PATTERN.test(name) || opts.isKnown(name)) continue;
    await opts.runtime
      .destroy(name)
      .catch((err: unknown) =>
        opts.log(`removing orphaned sandbox ${name} failed: ${String(err)}`),
      );
  }
}
