/**
 * The contract every resource and data source of the core keeps, run once per
 * descriptor of the registry against the real local service (behind the
 * request-counting proxy of the Pulumi tests): check returns every failure;
 * diff (and planOutputs) never call the service; create is all or nothing;
 * delete of something already gone succeeds; read of something gone returns
 * nothing; import from an id alone round-trips (or is refused, clearly).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createControlClient, type ControlClient } from "../../src/client/control";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import type { ResourceDescriptor } from "../../src/resources/core/descriptor";
import type { ResourceContext } from "../../src/resources/core/lifecycle";
import { dataSourceDescriptors, resourceDescriptors } from "../../src/resources/registry";
import { assertBuilt, startTestService, type TestService } from "../pulumi/support";
import { resourceFixtures, type Fixture } from "./contract.fixtures";

jest.setTimeout(600_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyResource = ResourceDescriptor<any, any>;
type Inputs = Record<string, unknown>;
type Outputs = Record<string, unknown>;

let svc: TestService;
let control: ControlClient;
let work: string;
/** A running sandbox the Snapshot, SandboxReader and data sources work on. */
let sandboxID: string;
const ownSandboxes: string[] = [];

beforeAll(async () => {
  assertBuilt();
  svc = await startTestService();
  work = mkdtempSync(path.join(tmpdir(), "contract-"));
  mkdirSync(path.join(work, "files"));
  writeFileSync(path.join(work, "files", "a.txt"), "contract\n");
  control = createControlClient({ config: ctx().config, log: () => undefined });
  sandboxID = await newSandbox();
});

afterAll(async () => {
  for (const id of ownSandboxes) await control.killSandbox(id).catch(() => undefined);
  await svc?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The context of every lifecycle call: relative paths resolve under `work`. */
function ctx(): ResourceContext {
  return {
    config: resolveConfig({ apiUrl: svc.apiUrl, apiKey: svc.apiKey, env: {} }),
    baseDir: work,
    log: () => undefined,
  };
}

async function newSandbox(metadata: Record<string, string> = {}): Promise<string> {
  const created = await svc.call("POST", "/sandboxes", {
    templateID: "base",
    timeout: 900,
    secure: true,
    metadata: { contract: "suite", ...metadata },
  });
  expect(created.status).toBe(201);
  const id = (created.body as { sandboxID: string }).sandboxID;
  ownSandboxes.push(id);
  return id;
}

async function templateExists(name: string): Promise<boolean> {
  return (await svc.call("GET", `/templates/aliases/${encodeURIComponent(name)}`)).status === 200;
}

async function snapshotsNamed(name: string): Promise<unknown[]> {
  return (await svc.call("GET", `/snapshots?name=${encodeURIComponent(name)}`)).body as unknown[];
}

async function errorOf(call: Promise<unknown>): Promise<SandboxIacError> {
  const failure = await call.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(SandboxIacError.is(failure)).toBe(true);
  return failure as SandboxIacError;
}

describe.each(resourceDescriptors.map((d) => ({ name: d.typeName, d })))(
  "resource $name keeps the contract",
  ({ d }: { d: AnyResource }) => {
    let fixture: Fixture;
    beforeAll(() => {
      const env = { sandboxID, control, templateExists, snapshotsNamed };
      fixture = resourceFixtures(env)[d.typeName]!;
    });
    let created: { id: string; outputs: Outputs } | undefined;

    it("check returns every failure, each with its path", () => {
      const result = d.lifecycle.check(fixture.invalid.inputs);
      expect(result.inputs).toBeUndefined();
      const paths = result.failures.map((f) => f.property);
      for (const p of fixture.invalid.paths) expect(paths).toContain(p);
      for (const f of result.failures) expect(f.reason).toMatch(/got /);
    });

    it("creates, and its outputs conform to the descriptor's schemas", async () => {
      const checked = d.lifecycle.check(fixture.valid());
      expect(checked.failures).toEqual([]);
      created = await d.lifecycle.create(checked.inputs, ctx());
      const outputKeys = Object.keys(d.outputs.shape);
      const pick = (keys: string[]) =>
        Object.fromEntries(Object.entries(created!.outputs).filter(([k]) => keys.includes(k)));
      expect(d.outputs.safeParse(pick(outputKeys)).error).toBeUndefined();
      // The inputs are stored exactly as written (no lower-casing, no defaults).
      expect(pick(Object.keys(d.args.shape))).toEqual(fixture.valid());
    });

    it("diff and planOutputs never call the service, and plan exactly what create produced", async () => {
      const outputs = created!.outputs;
      const before = svc.requests.length;
      const same = await d.lifecycle.diff(outputs, fixture.valid(), { baseDir: work });
      const changed = await d.lifecycle.diff(outputs, fixture.changed(fixture.valid()), {
        baseDir: work,
      });
      const planned = (await d.lifecycle.planOutputs?.(fixture.valid(), { baseDir: work })) ?? {};
      expect(svc.requests.slice(before)).toEqual([]);
      expect(same.changes).toBe(false);
      expect(changed.changes).toBe(true);
      for (const [key, value] of Object.entries(planned)) expect(outputs[key]).toEqual(value);
    });

    it("imports from an id alone", async () => {
      const { id, outputs } = created!;
      if (fixture.imported === "unsupported") {
        const failure = await errorOf(d.lifecycle.read(id, undefined, ctx()));
        expect(failure.code).toBe("unsupported");
        expect(failure.message).toContain("cannot be imported");
        return;
      }
      const imported = await d.lifecycle.read(id, undefined, ctx());
      expect(imported?.id).toBe(id);
      for (const key of fixture.imported)
        expect([key, imported!.outputs[key]]).toEqual([key, outputs[key]]);
      // The next diff against the configuration carries on from the imported state.
      const next = await d.lifecycle.diff(imported!.outputs, fixture.valid(), { baseDir: work });
      expect(next.replaces).toEqual([]);
    });

    it("create is all or nothing: a failed create leaves nothing behind", async () => {
      const { inputs, code, leftovers } = await fixture.failing();
      const checked = d.lifecycle.check(inputs);
      expect(checked.failures).toEqual([]);
      const failure = await errorOf(d.lifecycle.create(checked.inputs, ctx()));
      expect(failure.code).toBe(code);
      expect(await leftovers()).toEqual([]);
    });

    it("reads nothing once it is gone, and deleting it again succeeds", async () => {
      const { id, outputs } = created!;
      await d.lifecycle.delete(id, outputs, ctx());
      await fixture.makeGone?.(outputs);
      expect(await d.lifecycle.read(id, outputs, ctx())).toBeUndefined();
      await expect(d.lifecycle.delete(id, outputs, ctx())).resolves.toBeUndefined();
    });
  },
);

/** Arguments that find something, and arguments that find nothing, per data source. */
const QUERIES: Record<
  string,
  { found: () => Inputs; none: Inputs; noneIs: "not_found" | "empty" }
> = {
  sandbox: {
    found: () => ({ sandboxID: dataSandbox, includeMetrics: true }),
    none: { sandboxID: "igone0000000000000000" },
    noneIs: "not_found",
  },
  sandboxes: {
    found: () => ({ metadata: { contract: "data" }, state: ["running"] }),
    none: { metadata: { contract: "nobody" } },
    noneIs: "empty",
  },
  sandboxMetrics: {
    found: () => ({ sandboxID: dataSandbox, start: 0 }),
    none: { sandboxID: "igone0000000000000000" },
    noneIs: "not_found",
  },
  template: {
    found: () => ({ name: "Base" }),
    none: { name: "no-such-template" },
    noneIs: "not_found",
  },
  snapshots: {
    found: () => ({}),
    none: { name: "no-such-snapshot" },
    noneIs: "empty",
  },
};

let dataSandbox: string;

describe.each(dataSourceDescriptors.map((d) => ({ name: d.typeName, d })))(
  "data source $name keeps the contract",
  ({ d }) => {
    const query = QUERIES[d.typeName];

    beforeAll(async () => {
      dataSandbox ??= await newSandbox({ contract: "data" });
    });

    it("accepts its arguments as given and returns a result its schema describes", async () => {
      const args = query.found();
      expect(d.args.safeParse(args).error).toBeUndefined();
      const result = await d.read(args, ctx());
      expect(d.result.safeParse(result).error).toBeUndefined();
      if (d.typeName === "sandboxes") {
        const ids = (result as { sandboxes: Array<{ sandboxID: string }> }).sandboxes.map(
          (s) => s.sandboxID,
        );
        expect(ids).toEqual([dataSandbox]);
      }
    });

    it("finds nothing clearly: not_found for one thing, an empty list for a query", async () => {
      if (query.noneIs === "not_found") {
        expect((await errorOf(d.read(query.none, ctx()))).code).toBe("not_found");
      } else {
        const result = (await d.read(query.none, ctx())) as Record<string, unknown[]>;
        expect(Object.values(result)).toEqual([[]]);
      }
    });
  },
);
