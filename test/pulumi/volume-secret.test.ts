/**
 * Volume and Secret through Pulumi (test/harness) against the local service:
 * create, no-op, update in place (a changed seed file, a new secret value),
 * out-of-band deletion seen by refresh, destroy; the secret value is never in
 * the state in clear.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { destroy, refresh, up } from "../harness";
import { ops, plaintextOccurrences, pulumiStack, stackOptions, volumeFile } from "./support";
import { phases } from "../support/phases";

jest.setTimeout(600_000);

const VALUE_1 = "pulumi-secret-value-first-7d1c";
const VALUE_2 = "pulumi-secret-value-second-9e2f";

const stack = pulumiStack("volume-secret");

/** A file of the volume, read through the content API with the volume's token. */
async function seeded(volumeID: string, file = "/seed/seed.txt"): Promise<string> {
  const content = await volumeFile(stack.svc, volumeID, file);
  expect(typeof content).toBe("string");
  return content as string;
}

describe("Volume and Secret through Pulumi: one scenario, phase by phase", () => {
  const phase = phases();
  const opts = (value: string) => ({
    ...stackOptions(stack.svc, stack.dir, { volumeName: "pulumi-vol", secretValue: value }),
    secretConfig: ["sandbox-iac:apiKey", "secretValue"],
  });
  let volumeID: string;
  let secretID: string;

  phase(
    "creates the volume, the secret, the writer and the reader, the value kept secret",
    async () => {
      const created = await up(stack.dir, opts(VALUE_1));
      expect(ops(created).sort()).toEqual([
        "create reader",
        "create sec",
        "create vol",
        "create writer",
      ]);
      volumeID = created.outputs["volumeID"] as string;
      expect(await seeded(volumeID)).toBe("first seed\n");
      // The provisioner's sandbox mounted the volume and wrote into it; the reader reports the mount.
      expect(await seeded(volumeID, "/copied-by-provisioner.txt")).toBe("first seed\n");
      expect(created.outputs["mounts"]).toEqual([{ name: "pulumi-vol", path: "/mnt/vol" }]);
      expect(created.outputs["secretVersion"]).toBe(1);
      const stateText = readFileSync(opts(VALUE_1).stateFile, "utf8");
      expect(plaintextOccurrences(JSON.parse(stateText), VALUE_1)).toBe(0);
      expect(stateText).toContain(VALUE_1.slice(0, 20)); // only inside the secret wrapper
      expect(stateText).not.toContain(stack.svc.apiKey);
    },
  );

  phase("does nothing when nothing changed", async () => {
    // WHEN nothing changed THEN nothing happens
    expect(ops(await up(stack.dir, opts(VALUE_1))).sort()).toEqual([
      "same reader",
      "same sec",
      "same vol",
      "same writer",
    ]);
  });

  phase(
    "updates both in place when the seed file's content and the secret's value change",
    async () => {
      // WHEN the seed file's content and the secret's value change THEN both update in place
      writeFileSync(path.join(stack.dir, "seed.txt"), "second seed\n");
      const updated = await up(stack.dir, opts(VALUE_2));
      expect(
        ops(updated)
          .filter((o) => !o.startsWith("same"))
          .sort(),
      ).toEqual(["update sec", "update vol"]);
      expect(updated.outputs["volumeID"]).toBe(volumeID);
      expect(await seeded(volumeID)).toBe("second seed\n");
      expect(updated.outputs["secretVersion"]).toBe(2);
      const updatedState = JSON.parse(readFileSync(opts(VALUE_2).stateFile, "utf8")) as unknown;
      expect(plaintextOccurrences(updatedState, VALUE_2)).toBe(0);
      secretID = updated.outputs["secretID"] as string;
    },
  );

  phase("drops both on refresh when they were deleted out of band", async () => {
    // WHEN both are deleted out of band THEN refresh drops them
    expect((await stack.svc.call("DELETE", `/volumes/${volumeID}`)).status).toBe(204);
    expect((await stack.svc.call("DELETE", `/secrets/${secretID}`)).status).toBe(204);
    const refreshed = await refresh(stack.dir, opts(VALUE_2));
    expect(
      ops(refreshed)
        .filter((o) => o.startsWith("refresh-deleted"))
        .sort(),
    ).toEqual(["refresh-deleted sec", "refresh-deleted vol"]);
  });

  phase("creates both again on the next up, and destroys everything", async () => {
    // WHEN applied again THEN both are created again; WHEN destroyed THEN nothing is left
    const again = await up(stack.dir, opts(VALUE_2));
    expect(
      ops(again)
        .filter((o) => o.startsWith("create"))
        .sort(),
    ).toEqual(["create sec", "create vol"]);
    const destroyed = await destroy(stack.dir, opts(VALUE_2));
    expect(destroyed.state.resources).toEqual([]);
    expect((await stack.svc.call("GET", "/volumes")).body).toEqual([]);
    expect((await stack.svc.call("GET", "/secrets")).body).toEqual([]);
  });
});
