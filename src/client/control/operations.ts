/**
 * Every operation of the control client, and whether it may be retried.
 *
 * Idempotent: every GET, DELETE and PATCH, plus the POSTs whose repetition
 * changes nothing more than one call: `sandboxes.connect` (extend or resume to
 * the same end state), `sandboxes.setTimeout` (sets an absolute end),
 * `sandboxes.refresh` (extends only) and `sandboxes.updateNetwork` (a PUT
 * that replaces the whole configuration). Never retried: anything that creates
 * (sandbox, fork, template, snapshot, build start, tag assignment) and the state
 * changes whose repetition answers differently (pause, resume: 409).
 *
 * @module
 */

/** Operation name → whether a failed attempt may be repeated. */
export const OPERATIONS = {
  "sandboxes.create": false,
  "sandboxes.createV2": false,
  "sandboxes.get": true,
  "sandboxes.list": true,
  "sandboxes.listV2": true,
  "sandboxes.kill": true,
  "sandboxes.connect": true,
  "sandboxes.connectV2": true,
  "sandboxes.resume": false,
  "sandboxes.pause": false,
  "sandboxes.setTimeout": true,
  "sandboxes.refresh": true,
  "sandboxes.updateNetwork": true,
  "sandboxes.metrics": true,
  "sandboxes.batchMetrics": true,
  "sandboxes.logs": true,
  "sandboxes.logsV2": true,
  "sandboxes.fork": false,
  "snapshots.create": false,
  "snapshots.list": true,
  "templates.createV3": false,
  "templates.list": true,
  "templates.listV2": true,
  "templates.get": true,
  "templates.delete": true,
  "templates.update": true,
  "templates.updateV2": true,
  "templates.getByAlias": true,
  "templates.filesUploadLink": true,
  // The archive is opened again for each attempt and the link names its content.
  "templates.uploadFiles": true,
  "builds.startV2": false,
  "builds.cancel": true,
  "builds.status": true,
  "builds.logs": true,
  "tags.assign": false,
  "tags.delete": true,
  "tags.list": true,
  "volumes.create": false,
  "volumes.get": true,
  "volumes.list": true,
  "volumes.delete": true,
  "volumes.stat": true,
  "volumes.listDir": true,
  "volumes.makeDir": false,
  "volumes.updatePath": true,
  "volumes.removePath": true,
  "volumes.readFile": true,
  // A buffered body can be sent again; a stream is consumed by the first attempt.
  "volumes.writeFile": true,
  "volumes.writeFileStream": false,
  "secrets.create": false,
  "secrets.get": true,
  "secrets.list": true,
  "secrets.update": false,
  "secrets.delete": true,
} as const satisfies Record<string, boolean>;

/** One of the {@link OPERATIONS}. */
export type OperationName = keyof typeof OPERATIONS;

/** Whether `operation` may be retried. */
export function isIdempotent(operation: OperationName): boolean {
  return OPERATIONS[operation];
}
