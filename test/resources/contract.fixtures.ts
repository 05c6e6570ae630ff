/**
 * Per resource type, what the contract suite needs: valid inputs, a change,
 * inputs wrong in several places, a create that fails at the service and how
 * to see what it left behind, and what import recovers.
 */
import type { ControlClient } from "../../src/client/control";

type Inputs = Record<string, unknown>;
type Outputs = Record<string, unknown>;

/** What the suite set up, for the fixtures to use. */
export interface FixtureEnv {
  /** A running sandbox to snapshot and read. */
  sandboxID: string;
  control: ControlClient;
  templateExists: (name: string) => Promise<boolean>;
  snapshotsNamed: (name: string) => Promise<unknown[]>;
}

/** A create that fails at the service: its inputs, the error code, and what it would leave behind. */
interface Failing {
  inputs: Inputs;
  code: string;
  leftovers: () => Promise<unknown[]>;
}

/** What the contract needs to know about one resource type. */
export interface Fixture {
  /** Valid inputs whose create works. */
  valid: () => Inputs;
  /** A change of `valid` that diff must report. */
  changed: (inputs: Inputs) => Inputs;
  /** Inputs wrong in several places, and every path check must name. */
  invalid: { inputs: Inputs; paths: string[] };
  /** Valid inputs whose create fails at the service, its error code, and what would be left behind. */
  failing: () => Failing | Promise<Failing>;
  /** Output and input names that import must recover, or the refusal it gives. */
  imported: string[] | "unsupported";
  /** Makes the created thing gone when delete does not (a reader deletes nothing). */
  makeGone?: (outputs: Outputs) => Promise<void>;
}

/** The fixture of each resource type, over what the suite set up. */
export function resourceFixtures(env: FixtureEnv): Record<string, Fixture> {
  const { sandboxID, control, templateExists, snapshotsNamed } = env;
  return {
    Template: {
      valid: () => ({
        name: "Contract-Tpl",
        tags: ["v1"],
        cpuCount: 1,
        memoryMB: 512,
        build: {
          fromTemplate: "base",
          steps: [
            { copy: { src: "files", dest: "/opt/contract" } },
            { run: "test -f /opt/contract/a.txt" },
          ],
        },
      }),
      changed: (i) => ({ ...i, tags: ["v2"] }),
      invalid: {
        inputs: {
          name: "Not A/Valid/Name",
          cpuCount: 0,
          build: { fromTemplate: "a", fromImage: "b" },
        },
        paths: ["name", "cpuCount", "build"],
      },
      failing: () => ({
        inputs: {
          name: "contract-tpl-bad",
          build: { fromTemplate: "base", steps: [{ run: "echo failing on purpose; exit 3" }] },
        },
        code: "build_failed",
        leftovers: async () => ((await templateExists("contract-tpl-bad")) ? ["template"] : []),
      }),
      imported: [
        "templateID",
        "buildID",
        "names",
        "public",
        "envdVersion",
        "buildStatus",
        "currentTags",
        "cpuCount",
        "memoryMB",
        "tags",
      ],
    },
    Snapshot: {
      valid: () => ({ sandboxID, name: "Contract-Snap" }),
      changed: (i) => ({ ...i, name: "contract-snap-b" }),
      invalid: {
        inputs: { sandboxID: "Bad ID", name: "a/b/c", extra: 1 },
        paths: ["sandboxID", "name", "extra"],
      },
      failing: () => ({
        inputs: { sandboxID: "igone0000000000000000", name: "contract-snap-bad" },
        code: "not_found",
        leftovers: () => snapshotsNamed("contract-snap-bad"),
      }),
      imported: ["snapshotID", "names"],
    },
    SandboxReader: {
      valid: () => ({ sandboxID, includeMetrics: true }),
      changed: () => ({ sandboxID: "iother0000000000000000" }),
      invalid: {
        inputs: { sandboxID: "", includeMetrics: "yes" },
        paths: ["sandboxID", "includeMetrics"],
      },
      failing: () => ({
        inputs: { sandboxID: "igone0000000000000000" },
        code: "not_found",
        leftovers: async () => [],
      }),
      imported: ["sandboxID", "templateID", "state", "cpuCount", "memoryMB", "envdAccessToken"],
      makeGone: async (outputs) => {
        await control.killSandbox(outputs["sandboxID"] as string);
      },
    },
    Provisioner: {
      valid: () => ({
        template: "base",
        files: [{ source: "files", destination: "/home/user/contract" }],
        commands: [{ run: "test -f /home/user/contract/a.txt" }],
        triggers: { revision: "1" },
        metadata: { contract: "prov" },
        keepSandbox: true,
        snapshot: { name: "contract-prov-snap" },
      }),
      changed: (i) => ({ ...i, triggers: { revision: "2" } }),
      invalid: {
        inputs: { files: [{ source: "" }], commands: [{}], triggers: ["v1"] },
        paths: ["files.0.source", "files.0.destination", "commands.0", "triggers"],
      },
      failing: () => ({
        inputs: {
          template: "base",
          commands: [{ run: "echo failing on purpose; exit 3" }],
          metadata: { contract: "prov-bad" },
          // No keepSandbox: with it, a failed run's sandbox is kept for inspection on purpose
          // (provisioner.md, test/terraform/provisioner-checks.test.ts).
          snapshot: { name: "contract-prov-bad" },
        },
        code: "command_failed",
        leftovers: async () => [
          ...(await control.listSandboxes({ metadata: { contract: "prov-bad" } })),
          ...((await templateExists("contract-prov-bad")) ? ["snapshot template"] : []),
        ],
      }),
      imported: "unsupported",
    },
    Volume: {
      valid: () => ({
        name: "contract-volume",
        files: [{ source: "files/a.txt", destination: "/seed/a.txt" }],
      }),
      changed: (i) => ({ ...i, files: [{ source: "files/a.txt", destination: "/seed/b.txt" }] }),
      invalid: {
        inputs: { name: "no spaces allowed", files: [{ source: "", destination: "relative" }] },
        paths: ["name", "files.0.source", "files.0.destination"],
      },
      failing: () => ({
        // Valid to check, refused by the service's file system once the volume exists.
        inputs: {
          name: "contract-volume-bad",
          files: [{ source: "files/a.txt", destination: `/${"x".repeat(300)}` }],
        },
        code: "invalid_argument",
        leftovers: async () =>
          (await control.listVolumes()).filter((v) => v.name === "contract-volume-bad"),
      }),
      imported: ["volumeID", "name"],
    },
    Secret: {
      valid: () => ({ name: "contract-secret", value: "s3cr3t-value", metadata: { k: "v" } }),
      changed: (i) => ({ ...i, value: "another-value" }),
      invalid: {
        inputs: { name: "bad name", value: 7 },
        paths: ["name", "value"],
      },
      failing: async () => {
        // A name another secret holds: the service answers 409.
        const taken = await control.createSecret("contract-secret-taken", "first");
        return {
          inputs: { name: "contract-secret-taken", value: "second" },
          code: "conflict",
          leftovers: async () => {
            const left: unknown[] = [];
            for await (const s of control.listSecrets()) {
              if (s.name === "contract-secret-taken" && s.secretID !== taken.secretID) left.push(s);
            }
            return left;
          },
        };
      },
      imported: ["secretID", "name"],
    },
  };
}
