import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  destroy,
  HarnessRunError,
  isSecret,
  preview,
  readState,
  refresh,
  up,
  UNKNOWN,
  type HarnessResult,
  type RunOptions,
} from ".";

const PROGRAM = path.join(__dirname, "fixtures/file-program");
const TOKEN = "tok-7c1d0f55-do-not-leak";
const typeOf = "pulumi-nodejs:dynamic/files:File";
const urnOf = (name: string): string => `urn:pulumi:test::files::${typeOf}::${name}`;

/** A fresh "cloud" directory and state file, removed after the suite. */
interface Workspace {
  cloud: string;
  opts: (config?: Record<string, unknown>) => RunOptions;
  calls: () => string[];
  objects: () => Record<string, string>;
  cleanup: () => void;
}

function workspace(): Workspace {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "harness-test-"));
  const cloud = path.join(root, "cloud");
  fs.mkdirSync(path.join(cloud, "objects"), { recursive: true });
  const log = path.join(cloud, "calls.log");
  return {
    cloud,
    opts: (config = {}) => ({
      stateFile: path.join(root, "state.json"),
      config: { cloudDir: cloud, token: TOKEN, ...config },
      secretConfig: ["token", "note"],
    }),
    calls: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : []),
    objects: () =>
      Object.fromEntries(
        fs
          .readdirSync(path.join(cloud, "objects"))
          .map((f) => [f, fs.readFileSync(path.join(cloud, "objects", f), "utf8")]),
      ),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

const ops = (r: HarnessResult): string[] => r.operations.map((o) => `${o.op} ${o.name}`);
const newCalls = (before: string[], after: string[]): string[] => after.slice(before.length);

describe("harness lifecycle (docs/pulumi-provider.md#engine-harness)", () => {
  // Made in beforeAll, so a describe skipped by -t leaves no directory behind.
  let ws: Workspace;
  beforeAll(() => {
    ws = workspace();
  });
  afterAll(() => ws.cleanup());

  it("creates both resources, feeding b from a's output", async () => {
    const r = await up(PROGRAM, ws.opts());
    expect(ops(r).sort()).toEqual(["create a", "create b"]);
    expect(r.outputs["contentB"]).toBe("from a v1");
    expect(ws.objects()).toEqual({ "a.txt": "hello", "b.txt": "from a v1" });
    expect(readState(ws.opts().stateFile).resources.map((x) => x.urn)).toEqual([
      urnOf("a"),
      urnOf("b"),
    ]);
    expect(r.state.resources.find((x) => x.urn === urnOf("b"))?.dependencies).toEqual([urnOf("a")]);
  });

  it("reports same for an unchanged program without calling Create or Update", async () => {
    const before = ws.calls();
    const r = await up(PROGRAM, ws.opts());
    expect(ops(r)).toEqual(["same a", "same b"]);
    expect(ws.calls()).toEqual(before);
  });

  it("previews a content change as updates and leaves the cloud and the state untouched", async () => {
    const before = {
      calls: ws.calls(),
      objects: ws.objects(),
      state: fs.readFileSync(ws.opts().stateFile, "utf8"),
    };
    const r = await preview(PROGRAM, ws.opts({ contentA: "hello v2" }));
    // b shows as an update because a.version is unknown in preview.
    expect(ops(r)).toEqual(["update a", "update b"]);
    expect(r.outputs["versionA"]).toBe(UNKNOWN);
    expect({
      calls: ws.calls(),
      objects: ws.objects(),
      state: fs.readFileSync(ws.opts().stateFile, "utf8"),
    }).toEqual(before);
  });

  it("updates a and then b with a's new version", async () => {
    const before = ws.calls();
    const r = await up(PROGRAM, ws.opts({ contentA: "hello v2" }));
    expect(ops(r)).toEqual(["update a", "update b"]);
    expect(newCalls(before, ws.calls())).toEqual(["update a.txt", "update b.txt"]);
    expect(ws.objects()).toEqual({ "a.txt": "hello v2", "b.txt": "from a v2" });
  });

  it("replaces on a key change, deleting first when deleteBeforeReplace is set and last otherwise", async () => {
    const before = ws.calls();
    const r = await up(
      PROGRAM,
      ws.opts({ contentA: "hello v2", keyA: "a2.txt", dbr: true, keyB: "b2.txt" }),
    );
    expect(ops(r)).toEqual(["delete a", "replace a", "replace b", "delete b"]);
    const calls = newCalls(before, ws.calls());
    expect(calls.indexOf("delete a.txt")).toBeLessThan(calls.indexOf("create a2.txt"));
    expect(calls.indexOf("create b2.txt")).toBeLessThan(calls.indexOf("delete b.txt"));
    expect(ws.objects()).toEqual({ "a2.txt": "hello v2", "b2.txt": "from a v1" });
    expect(readState(ws.opts().stateFile).resources.filter((x) => x.pendingDelete)).toEqual([]);
  });

  it("refreshes drift: an edited file is a refresh-update and a removed one is refresh-deleted", async () => {
    fs.writeFileSync(path.join(ws.cloud, "objects", "a2.txt"), "edited behind pulumi's back");
    fs.rmSync(path.join(ws.cloud, "objects", "b2.txt"));
    const r = await refresh(PROGRAM, ws.opts());
    expect(ops(r).sort()).toEqual(["refresh-deleted b", "refresh-update a"]);
    expect(readState(ws.opts().stateFile).resources.map((x) => x.urn)).toEqual([urnOf("a")]);
  });

  it("recreates what refresh found deleted and repairs the drift", async () => {
    const r = await up(
      PROGRAM,
      ws.opts({ contentA: "hello v2", keyA: "a2.txt", dbr: true, keyB: "b2.txt" }),
    );
    expect(ops(r).sort()).toEqual(["create b", "update a"]);
    expect(ws.objects()).toEqual({ "a2.txt": "hello v2", "b2.txt": "from a v2" });
  });

  it("destroys everything, leaving an empty cloud and an empty state", async () => {
    const r = await destroy(PROGRAM, ws.opts());
    // b depends on a, so b goes first.
    expect(ops(r)).toEqual(["delete b", "delete a"]);
    expect(ws.objects()).toEqual({});
    expect(readState(ws.opts().stateFile)).toEqual({ resources: [] });
  });
});

describe("harness secrets", () => {
  // Made in beforeAll, so a describe skipped by -t leaves no directory behind.
  let ws: Workspace;
  beforeAll(() => {
    ws = workspace();
  });
  afterAll(() => ws.cleanup());

  it("keeps secret config, secret inputs and additionalSecretOutputs out of the state file in clear", async () => {
    const r = await up(PROGRAM, ws.opts({ note: "note-94e1-secret" }));
    const text = fs.readFileSync(ws.opts().stateFile, "utf8");
    // The token reached configure() (create refuses without it) but never the state.
    expect(text.includes(TOKEN)).toBe(false);
    // The note is stored, but only inside secret wrappers (the CLI would encrypt those).
    const outsideSecrets = JSON.stringify(JSON.parse(text), (_k, v: unknown) =>
      isSecret(v) ? "[secret]" : v,
    );
    expect([
      text.includes("note-94e1-secret"),
      outsideSecrets.includes("note-94e1-secret"),
    ]).toEqual([true, false]);
    const a = r.state.resources.find((x) => x.urn === urnOf("a"))!;
    const b = r.state.resources.find((x) => x.urn === urnOf("b"))!;
    // A secret input makes the same-named output secret; additionalSecretOutputs marks a new key.
    expect([
      isSecret(a.inputs["note"]),
      isSecret(a.outputs["note"]),
      isSecret(a.outputs["receipt"]),
    ]).toEqual([true, true, true]);
    expect(b.outputs["receipt"]).toBe("rcpt-b.txt");
    expect(r.secretOutputs).toEqual(["receiptA"]);
    expect(r.outputs["receiptA"]).toBe("rcpt-a.txt");
  });
});

describe("harness failures", () => {
  // Made in beforeAll, so a describe skipped by -t leaves no directory behind.
  let ws: Workspace;
  beforeAll(() => {
    ws = workspace();
  });
  afterAll(() => ws.cleanup());

  it("fails when a create fails, naming the resource and keeping the partial state", async () => {
    const failed = await up(PROGRAM, ws.opts({ extraKey: "boom.txt", failKey: "boom.txt" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(HarnessRunError);
    const { result, message } = failed as HarnessRunError;
    expect(message).toContain(`create of ${urnOf("c")} failed`);
    expect(message).toContain("cannot create boom.txt: the disk is full (simulated)");
    expect(
      readState(ws.opts().stateFile)
        .resources.map((x) => x.urn)
        .sort(),
    ).toEqual([urnOf("a"), urnOf("b")]);
    expect(result.state.resources).toHaveLength(2);
  });
});
