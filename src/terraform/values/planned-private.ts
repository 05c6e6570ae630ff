/**
 * The plan's decision carried to apply in `PlannedPrivate`: Terraform hands
 * the bytes a PlanResourceChange returned to the ApplyResourceChange of the
 * same change, and it plans again, with every value known, right before it
 * applies. Apply therefore acts on the core's diff as planned instead of
 * computing it again. No value travels (plans are stored on disk and must
 * hold no secret).
 *
 * @module
 */
import { SandboxIacError } from "../../errors";

/** Bumped when the record's shape changes, so a record of another shape is refused. */
const RECORD_VERSION = 1;

/** What apply needs of the planned diff: whether the update must reach the service. */
interface PlannedChange {
  /**
   * False when the inputs differ only in ways the core's diff ignores (an
   * `ignore` rule, a normalised spelling): the state takes the new inputs
   * and the service is not called.
   */
  readonly changes: boolean;
}

/** The bytes of a planned update for `PlannedPrivate`. */
export function encodePlannedChange(change: PlannedChange): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ version: RECORD_VERSION, changes: change.changes }),
  );
}

/** The planned update in `PlannedPrivate`; a missing or foreign record is a bug, not a user error. */
export function decodePlannedChange(bytes: Uint8Array, typeName: string): PlannedChange {
  let record: { version?: unknown; changes?: unknown } | undefined;
  try {
    record = bytes.length > 0 ? JSON.parse(new TextDecoder().decode(bytes)) : undefined;
  } catch {
    record = undefined;
  }
  if (record?.version !== RECORD_VERSION || typeof record.changes !== "boolean") {
    throw new SandboxIacError(
      "internal",
      `the planned update of ${typeName} carries no change record from this provider ` +
        "(Terraform passes the plan's private data to apply): run terraform apply again",
      { operation: "terraform.apply" },
    );
  }
  return { changes: record.changes };
}
