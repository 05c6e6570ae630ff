import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SandboxIacError } from "../../errors";
import { createSandboxClient } from "./client";
import { isMultipartSafePath } from "./files-upload-batch";
import { neverFetch, neverTransport } from "../../../test/support/never-transports";

// The service's handling of multipart uploads is exercised end to end by the
// Provisioner (bench/provisioner.js checks every file arrived). These check
// what the client puts on the wire and how it reports bad input, with a fetch
// that decodes the request the way a server would.
interface Captured {
  url: URL;
  contentType: string | null;
  parts: Array<{ filename: string; content: string }>;
}

function capturingFetch(
  captured: Captured[],
  answer: (parts: Captured["parts"]) => unknown,
): typeof fetch {
  return async (input, init) => {
    const request = new Request(input instanceof Request ? input.url : input, init);
    const form = await request.formData();
    const parts: Captured["parts"] = [];
    for (const [field, value] of form.entries()) {
      if (field !== "file" || typeof value === "string")
        throw new Error(`unexpected form field ${field}`);
      parts.push({ filename: value.name, content: await value.text() });
    }
    captured.push({
      url: new URL(request.url),
      contentType: request.headers.get("content-type"),
      parts,
    });
    return new Response(JSON.stringify(answer(parts)), {
      status: 200,
      headers: { "Content-Type": "application/json" },
    });
  };
}

function written(parts: Captured["parts"]) {
  return parts.map((p) => ({
    path: p.filename,
    name: path.posix.basename(p.filename),
    type: "file",
  }));
}

describe("uploadFiles()", () => {
  let dir: string;
  const local = (name: string) => path.join(dir, name);

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-upload-batch-"));
    fs.writeFileSync(local("a.txt"), "alpha");
    fs.writeFileSync(local("b.bin"), Buffer.from([0, 1, 2, 255]));
    fs.writeFileSync(local("empty"), "");
    fs.mkdirSync(local("sub"));
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function client(fetchImpl: typeof fetch, user?: string) {
    return createSandboxClient({
      sandboxID: "isbx1",
      baseUrl: "http://127.0.0.1:1",
      transport: neverTransport(),
      fetch: fetchImpl,
      user,
    });
  }

  it("sends every file as one part named by its destination, in one request without a path query", async () => {
    const captured: Captured[] = [];
    const result = await client(capturingFetch(captured, written)).uploadFiles([
      { localPath: local("a.txt"), remotePath: "/home/user/app/a.txt" },
      { localPath: local("b.bin"), remotePath: "rel/b.bin" },
      { localPath: local("empty"), remotePath: "/tmp/empty" },
    ]);
    expect(captured).toHaveLength(1);
    const [request] = captured as [Captured];
    expect(request.url.pathname).toBe("/files");
    expect(request.url.searchParams.has("path")).toBe(false);
    expect(request.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.parts).toEqual([
      { filename: "/home/user/app/a.txt", content: "alpha" },
      { filename: "rel/b.bin", content: Buffer.from([0, 1, 2, 255]).toString("utf8") },
      { filename: "/tmp/empty", content: "" },
    ]);
    expect(result.map((w) => w.path)).toEqual(["/home/user/app/a.txt", "rel/b.bin", "/tmp/empty"]);
  });

  it("acts as the given user, else the client's", async () => {
    const captured: Captured[] = [];
    await client(capturingFetch(captured, written), "user").uploadFiles(
      [{ localPath: local("a.txt"), remotePath: "a" }],
      { user: "root" },
    );
    await client(capturingFetch(captured, written), "user").uploadFiles([
      { localPath: local("a.txt"), remotePath: "a" },
    ]);
    expect(captured.map((c) => c.url.searchParams.get("username"))).toEqual(["root", "user"]);
  });

  it("sends nothing for an empty list", async () => {
    const calls: string[] = [];
    await expect(client(neverFetch(calls)).uploadFiles([])).resolves.toEqual([]);
    expect(calls).toEqual([]);
  });

  it("fails when a destination cannot travel as a multipart filename, before sending", async () => {
    const calls: string[] = [];
    const err = await client(neverFetch(calls))
      .uploadFiles([
        { localPath: local("a.txt"), remotePath: "/ok" },
        { localPath: local("a.txt"), remotePath: '/home/user/say "hi".txt' },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxIacError);
    expect(err).toMatchObject({ code: "invalid_argument", field: "entries[1].remotePath" });
    expect(err).toMatchObject({ message: expect.stringContaining("uploadFile()") });
    expect(calls).toEqual([]);
  });

  it("fails when two entries share a destination", async () => {
    const calls: string[] = [];
    await expect(
      client(neverFetch(calls)).uploadFiles([
        { localPath: local("a.txt"), remotePath: "/x" },
        { localPath: local("b.bin"), remotePath: "/x" },
      ]),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      field: "entries[1].remotePath",
      message: expect.stringContaining("send each destination once"),
    });
    expect(calls).toEqual([]);
  });

  it("fails when a local file does not exist, naming it", async () => {
    const calls: string[] = [];
    await expect(
      client(neverFetch(calls)).uploadFiles([{ localPath: local("missing"), remotePath: "/x" }]),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      field: "entries[0].localPath",
      message: expect.stringContaining(local("missing")),
    });
    expect(calls).toEqual([]);
  });

  it("fails when a local path is a directory, naming the entry", async () => {
    const captured: Captured[] = [];
    await expect(
      client(capturingFetch(captured, written)).uploadFiles([
        { localPath: local("a.txt"), remotePath: "/a" },
        { localPath: local("sub"), remotePath: "/sub" },
      ]),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      field: "entries[1].localPath",
      message: expect.stringContaining("a regular file"),
    });
  });

  it("fails when the sandbox lists fewer written files than were sent", async () => {
    const captured: Captured[] = [];
    await expect(
      client(capturingFetch(captured, (parts) => written(parts).slice(1))).uploadFiles([
        { localPath: local("a.txt"), remotePath: "/a" },
        { localPath: local("b.bin"), remotePath: "/b" },
      ]),
    ).rejects.toMatchObject({
      code: "contract_violation",
      message: expect.stringContaining("2 files with 1 written"),
    });
  });
});

describe("isMultipartSafePath()", () => {
  it("accepts printable ASCII paths and refuses quotes, backslashes, line breaks and non-ASCII", () => {
    expect(["/home/user/a b/c-1_2.txt", "rel/x%22y", "/a'b"].map(isMultipartSafePath)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['/a"b', "/a\\b", "/a\nb", "/caf\u00e9", ""].map(isMultipartSafePath)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
