import { Code, ConnectError } from "@connectrpc/connect";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients, rawRequest, uploadForm } from "../../../test/support/agent/clients";
import { eventually } from "../../../test/support/eventually";

const octet = { "content-type": "application/octet-stream" };
const json = { "content-type": "application/json" };
const body = (r: { body: Buffer }) => JSON.parse(r.body.toString()) as Record<string, unknown>;

async function expectCode(p: Promise<unknown>, code: Code, text: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(code);
  expect((err as ConnectError).rawMessage).toMatch(text);
}

describe("uploads as envd answers them", () => {
  let sbx: TestSandbox;
  beforeAll(async () => {
    sbx = await startTestSandbox();
  });
  afterAll(() => sbx?.stop());

  it("echoes each written file's metadata, multipart and octet-stream alike", async () => {
    const oct = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/m1.txt",
      { ...octet, "x-metadata-Color": "blue" },
      "x",
    );
    expect(JSON.parse(oct.body.toString())).toEqual([
      { path: "/tmp/m1.txt", name: "m1.txt", type: "file", metadata: { color: "blue" } },
    ]);
    const multi = await uploadForm(
      sbx.socketPath,
      "/files",
      [{ data: "y", filename: "/tmp/m2.txt" }],
      { "x-metadata-owner": "me" },
    );
    expect(JSON.parse(multi.body.toString())).toEqual([
      { path: "/tmp/m2.txt", name: "m2.txt", type: "file", metadata: { owner: "me" } },
    ]);
  });

  it("writes a multipart part without a filename to the path query", async () => {
    const up = await uploadForm(sbx.socketPath, "/files?path=/tmp/nameless.txt", [
      { data: "text part" },
    ]);
    expect(up.status).toBe(200);
    expect(JSON.parse(up.body.toString())).toEqual([
      { path: "/tmp/nameless.txt", name: "nameless.txt", type: "file" },
    ]);
    const got = await rawRequest(sbx.socketPath, "GET", "/files?path=/tmp/nameless.txt");
    expect(got.body.toString()).toBe("text part");
  });

  it("answers 400 to an upload that would write nothing", async () => {
    const noPath = await uploadForm(sbx.socketPath, "/files", [{ data: "lost" }]);
    expect(noPath.status).toBe(400);
    expect(body(noPath).message).toMatch(/neither a filename nor a path query/);
    const wrongField = await uploadForm(sbx.socketPath, "/files?path=/tmp/o", [
      { data: "x", filename: "/tmp/o", name: "other" },
    ]);
    expect(wrongField.status).toBe(400);
    expect(body(wrongField).message).toMatch(/no part named 'file'/);
    const noBoundary = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/o",
      { "content-type": "multipart/form-data" },
      "x",
    );
    expect(noBoundary.status).toBe(400);
    expect(fs.existsSync(path.join(sbx.upperDir, "tmp", "o"))).toBe(false);
  });

  it("answers a path no file can have with a 4xx naming the path and the reason", async () => {
    const long = `/tmp/${"n".repeat(300)}`;
    const tooLong = await rawRequest(sbx.socketPath, "POST", `/files?path=${long}`, octet, "x");
    expect(tooLong.status).toBe(400);
    expect(body(tooLong).message).toBe(
      `cannot write '${long}': file name too long: each name is at most 255 bytes`,
    );
    const readOnly = await rawRequest(sbx.socketPath, "POST", "/files?path=/usr/x", octet, "x");
    expect(readOnly.status).toBe(403);
    expect(body(readOnly).message).toMatch(/^cannot write '\/usr\/x': read-only file system/);
    const nul = await rawRequest(sbx.socketPath, "POST", "/files?path=/tmp/a%00b", octet, "x");
    expect(nul.status).toBe(400);
    expect(body(nul).message).toMatch(/contains a NUL byte/);
    const dir = await rawRequest(sbx.socketPath, "POST", "/files?path=/tmp", octet, "x");
    expect(dir.status).toBe(400);
    expect(body(dir).message).toBe("cannot write '/tmp': is a directory");
    const { process: proc } = agentClients(sbx.socketPath);
    for await (const _ of proc.start({
      process: { cmd: "/bin/sh", args: ["-c", "mkfifo /tmp/fifo"] },
      stdin: false,
    })) {
      // to the end
    }
    const fifo = await rawRequest(sbx.socketPath, "GET", "/files?path=/tmp/fifo");
    expect(fifo.status).toBe(400);
    expect(body(fifo).message).toMatch(/not a regular file/);
    const nullBody = await rawRequest(sbx.socketPath, "POST", "/files/compose", json, "null");
    expect(nullBody.status).toBe(400);
    expect(body(nullBody).message).toMatch(/must be a JSON object/);
  });

  it("answers filesystem RPCs on impossible paths with the caller's error codes", async () => {
    const { fs: files, process: proc } = agentClients(sbx.socketPath);
    const long = `/tmp/${"n".repeat(300)}`;
    await expectCode(files.stat({ path: long }), Code.InvalidArgument, /file name too long/);
    await expectCode(files.makeDir({ path: "/usr/zz" }), Code.PermissionDenied, /read-only/);
    await expectCode(files.stat({ path: "/tmp/a\0" }), Code.InvalidArgument, /NUL byte/);
    await expectCode(files.remove({ path: "/" }), Code.InvalidArgument, /root directory/);
    await expectCode(files.remove({ path: "" }), Code.InvalidArgument, /path is empty/);
    for await (const _ of proc.start({
      process: { cmd: "/bin/sh", args: ["-c", "ln -s l2 /tmp/l1; ln -s l1 /tmp/l2"] },
      stdin: false,
    })) {
      // to the end
    }
    await expectCode(
      files.listDir({ path: "/tmp/l1" }),
      Code.FailedPrecondition,
      /\/tmp\/l1: too many levels of symbolic links/,
    );
    const proto = await rawRequest(
      sbx.socketPath,
      "POST",
      "/filesystem.Filesystem/Stat",
      { "content-type": "application/proto" },
      "abc",
    );
    expect(proto.status).toBe(415);
    expect(body(proto).code).toBe("invalid_argument");
  });

  it("replaces a file only once its upload is complete, keeping its mode and links", async () => {
    const put = (p: string, data: string) =>
      rawRequest(sbx.socketPath, "POST", `/files?path=${p}`, octet, data);
    await put("/tmp/keep.txt", "old content");
    const { process: proc } = agentClients(sbx.socketPath);
    for await (const _ of proc.start({
      process: {
        cmd: "/bin/sh",
        args: ["-c", "chmod 750 /tmp/keep.txt; ln -s keep.txt /tmp/link"],
      },
      stdin: false,
    })) {
      // to the end
    }
    // An upload cut off half-way (once its temporary file exists) leaves the old
    // file untouched and no partial file.
    const upperTmp = path.join(sbx.upperDir, "tmp");
    const partials = () => fs.readdirSync(upperTmp).filter((n) => n.startsWith(".sandbox-iac-"));
    const req = http.request({
      socketPath: sbx.socketPath,
      method: "POST",
      path: "/files?path=/tmp/keep.txt",
      headers: { ...octet, "content-length": "1000000" },
    });
    const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
    req.on("error", () => undefined);
    req.write("partial new con");
    await eventually(() => partials().length > 0, { timeoutMs: 10_000, intervalMs: 20 });
    req.destroy();
    await closed;
    await eventually(() => partials().length === 0, { timeoutMs: 5_000 }).catch(() => undefined);
    expect(partials()).toEqual([]);
    expect(fs.readFileSync(path.join(upperTmp, "keep.txt"), "utf8")).toBe("old content");

    await put("/tmp/link", "new content");
    expect(fs.lstatSync(path.join(upperTmp, "link")).isSymbolicLink()).toBe(true);
    const st = fs.statSync(path.join(upperTmp, "keep.txt"));
    expect(st.mode & 0o777).toBe(0o750);
    expect(fs.readFileSync(path.join(upperTmp, "keep.txt"), "utf8")).toBe("new content");
  });
});
