/**
 * examples/pulumi-basic through Pulumi (test/harness) against the local
 * service, as `npm run demo` runs it: `up` creates everything (the volume
 * holds what the writer's sandbox wrote, the reader's sandbox found it), a
 * second `up` changes nothing, `destroy` leaves no template, sandbox or volume.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { destroy, up } from "../harness";
import {
  assertBuilt,
  ops,
  stackOptions,
  startTestService,
  volumeFile,
  type TestService,
} from "./support";

jest.setTimeout(600_000);

const REPO = path.resolve(__dirname, "..", "..");
const EXAMPLE = path.join(REPO, "examples", "pulumi-basic");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { linkPackages } = require(path.join(EXAMPLE, "link.js")) as {
  linkPackages: (dir: string) => void;
};

let svc: TestService;
let dir: string;

/** The example copied into a temp dir, its packages linked and compiled to bin/. */
function compiledExample(): string {
  const copy = mkdtempSync(path.join(tmpdir(), "pulumi-basic-"));
  cpSync(EXAMPLE, copy, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|bin)$/.test(src),
  });
  linkPackages(copy);
  execFileSync(process.execPath, [
    require.resolve("typescript/bin/tsc"),
    "-p",
    path.join(copy, "tsconfig.json"),
    // The example's typeRoots are relative to its place in the repository.
    "--typeRoots",
    path.join(REPO, "node_modules", "@types"),
  ]);
  return copy;
}

beforeAll(async () => {
  assertBuilt();
  svc = await startTestService();
  dir = compiledExample();
});

afterAll(async () => {
  await svc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("examples/pulumi-basic", () => {
  it("shares a volume between a writer and a reader sandbox, changes nothing again, and destroys everything", async () => {
    const opts = stackOptions(svc, dir);

    const created = await up(dir, opts);
    expect(ops(created).sort()).toEqual([
      "create kept",
      "create reader",
      "create setup",
      "create tools",
      "create workspace",
      "create writer",
    ]);
    expect(created.outputs["sandboxState"]).toBe("running");
    const volumeID = created.outputs["volumeID"] as string;
    expect(await volumeFile(svc, volumeID, "/settings.json")).toBe(
      readFileSync(path.join(EXAMPLE, "files", "config", "settings.json"), "utf8"),
    );
    expect(await volumeFile(svc, volumeID, "/note.txt")).toBe("written by the writer\n");
    // The reader's grep fails the update unless it found the writer's line.
    expect(created.outputs["writerCommandsRun"]).toBe(1);
    expect(created.outputs["readerCommandsRun"]).toBe(1);
    const volumes = (await svc.call("GET", "/volumes")).body as Array<{ name: string }>;
    expect(volumes.map((v) => v.name)).toEqual(["pulumi-basic-workspace"]);

    const again = await up(dir, opts);
    expect(ops(again).filter((o) => !o.startsWith("same"))).toEqual([]);

    const destroyed = await destroy(dir, opts);
    expect(destroyed.state.resources).toEqual([]);
    expect((await svc.call("GET", "/volumes")).body).toEqual([]);
    expect((await svc.call("GET", "/sandboxes")).body).toEqual([]);
    const templates = (await svc.call("GET", "/templates")).body as Array<{ names: string[] }>;
    expect(templates.flatMap((t) => t.names).filter((n) => n.startsWith("pulumi-basic"))).toEqual(
      [],
    );
  });
});
