import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients, rawRequest } from "../../../test/support/agent/clients";
import { collect } from "../../../test/support/agent/collect";

// File metadata lives in `user.e2b.*` xattrs, read by the agent's native addon.
describe("file metadata in Stat and ListDir", () => {
  let sbx: TestSandbox;
  let clients: ReturnType<typeof agentClients>;

  const sh = async (script: string) => {
    const s = await collect(
      clients.process.start({
        process: { cmd: "/bin/bash", args: ["-c", script] },
        stdin: false,
      }),
    );
    expect({ script, end: s.end?.exitCode, stderr: s.stderr }).toEqual({
      script,
      end: 0,
      stderr: "",
    });
  };

  beforeAll(async () => {
    sbx = await startTestSandbox();
    clients = agentClients(sbx.socketPath);
    const up = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/meta/tagged.txt",
      {
        "content-type": "application/octet-stream",
        "x-metadata-owner": "team-a",
        "x-metadata-note": "two words",
        // UTF-8 bytes on the wire: Node writes header strings as Latin-1, one byte per char
        // (when the body is a Buffer; a string body would re-encode the whole head as UTF-8).
        "x-metadata-greeting": Buffer.from("héllo wörld ✓").toString("latin1"),
      },
      Buffer.from("x"),
    );
    expect(up.status).toBe(200);
    await sh(
      [
        "cd /tmp/meta",
        "echo plain > plain.txt",
        "ln -s tagged.txt link",
        // Set by code in the sandbox, not by an upload: read back all the same;
        // other namespaces' attributes are not metadata.
        `python3 -c 'import os; os.setxattr("plain.txt", "user.e2b.by", "sändbox".encode()); os.setxattr("plain.txt", "user.other", b"x")'`,
      ].join(" && "),
    );
  });
  afterAll(() => sbx?.stop());

  it("reports each file's user.e2b.* attributes in Stat, decoded as UTF-8", async () => {
    const tagged = await clients.fs.stat({ path: "/tmp/meta/tagged.txt" });
    expect(tagged.entry?.metadata).toEqual({
      owner: "team-a",
      note: "two words",
      greeting: "héllo wörld ✓",
    });
    const plain = await clients.fs.stat({ path: "/tmp/meta/plain.txt" });
    expect(plain.entry?.metadata).toEqual({ by: "sändbox" });
  });

  it("reports a symlink's own (empty) metadata, never its target's", async () => {
    const link = await clients.fs.stat({ path: "/tmp/meta/link" });
    expect(link.entry?.symlinkTarget).toBe("/tmp/meta/tagged.txt");
    expect(link.entry?.metadata).toEqual({});
  });

  it("reports every entry's metadata in ListDir, empty where there is none", async () => {
    const { entries } = await clients.fs.listDir({ path: "/tmp/meta", depth: 1 });
    expect(Object.fromEntries(entries.map((e) => [e.name, e.metadata]))).toEqual({
      link: {},
      "plain.txt": { by: "sändbox" },
      "tagged.txt": { owner: "team-a", note: "two words", greeting: "héllo wörld ✓" },
    });
  });

  it("replaces the metadata set on re-upload and clears it when none is sent", async () => {
    const again = (headers: Record<string, string>) =>
      rawRequest(
        sbx.socketPath,
        "POST",
        "/files?path=/tmp/meta/tagged.txt",
        { "content-type": "application/octet-stream", ...headers },
        "y",
      );
    expect((await again({ "x-metadata-color": "blue" })).status).toBe(200);
    expect((await clients.fs.stat({ path: "/tmp/meta/tagged.txt" })).entry?.metadata).toEqual({
      color: "blue",
    });
    expect((await again({})).status).toBe(200);
    expect((await clients.fs.stat({ path: "/tmp/meta/tagged.txt" })).entry?.metadata).toEqual({});
  });

  it("fails an upload whose metadata value is not UTF-8 with 400, before writing", async () => {
    // A lone Latin-1 0xE9 byte ("é" in Latin-1) is not UTF-8.
    const res = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/meta/latin1.txt",
      { "content-type": "application/octet-stream", "x-metadata-word": "caf\u00e9" },
      Buffer.from("z"),
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).message).toBe(
      "metadata value of 'word' is not UTF-8: send the value's UTF-8 bytes (or printable ASCII)",
    );
    expect(
      (await rawRequest(sbx.socketPath, "GET", "/files?path=/tmp/meta/latin1.txt")).status,
    ).toBe(404);
  });
});
