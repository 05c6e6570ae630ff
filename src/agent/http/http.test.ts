import * as zlib from "node:zlib";
import * as tar from "tar";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ENVD_VERSION } from "../../wire/envd";
import { filesSignature } from "../../wire/files-signature";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { agentClients, rawRequest, uploadForm } from "../../../test/support/agent/clients";

// A fresh sandbox per test group: /init changes agent-wide state.
async function withSandbox(fn: (sbx: TestSandbox) => Promise<void>): Promise<void> {
  const sbx = await startTestSandbox();
  try {
    await fn(sbx);
  } finally {
    await sbx.stop();
  }
}

const initBody = (extra: object = {}) =>
  JSON.stringify({ envVars: { A: "1" }, accessToken: "tok-123", defaultUser: "user", ...extra });

describe("plain routes without a token", () => {
  it("answers health, init, envs and file round trips", () =>
    withSandbox(async ({ socketPath }) => {
      const health = await rawRequest(socketPath, "GET", "/health");
      expect(health.status).toBe(204);
      expect(health.headers["cache-control"]).toBe("no-store");

      const init = await rawRequest(
        socketPath,
        "POST",
        "/init",
        { "content-type": "application/json" },
        JSON.stringify({ envVars: { A: "1" }, defaultUser: "user" }),
      );
      expect(init.status).toBe(204);
      expect(init.headers["x-envd-version"]).toBe(ENVD_VERSION);
      const envs = await rawRequest(socketPath, "GET", "/envs");
      expect(JSON.parse(envs.body.toString())).toEqual({ E2B_SANDBOX: "true", A: "1" });

      // multipart: the filename is the path when there is no path query
      const up = await uploadForm(socketPath, "/files", [
        { name: "file", filename: "up/a.txt", data: "alpha" },
        { name: "file", filename: "/tmp/b.txt", data: "beta" },
      ]);
      expect(up.status).toBe(200);
      expect(JSON.parse(up.body.toString())).toEqual([
        { path: "/home/user/up/a.txt", name: "a.txt", type: "file" },
        { path: "/tmp/b.txt", name: "b.txt", type: "file" },
      ]);
      const { fs: fsClient } = agentClients(socketPath);
      const { entry } = await fsClient.stat({ path: "up/a.txt" });
      expect(entry).toMatchObject({ owner: "user", size: 5n });

      // octet-stream with gzip, overwriting
      const gz = zlib.gzipSync(Buffer.from("gamma gamma"));
      const oct = await rawRequest(
        socketPath,
        "POST",
        "/files?path=up/a.txt",
        {
          "content-type": "application/octet-stream",
          "content-encoding": "gzip",
          "x-metadata-Color": "blue",
        },
        gz,
      );
      expect(oct.status).toBe(200);
      const got = await rawRequest(socketPath, "GET", "/files?path=up/a.txt");
      expect(got.body.toString()).toBe("gamma gamma");
      expect(got.headers["content-disposition"]).toBe('inline; filename="a.txt"');
      const after = await fsClient.stat({ path: "up/a.txt" });
      expect(after.entry?.metadata).toEqual({ color: "blue" });

      const gzGet = await rawRequest(socketPath, "GET", "/files?path=/tmp/b.txt", {
        "accept-encoding": "gzip",
      });
      expect(gzGet.headers["content-encoding"]).toBe("gzip");
      expect(zlib.gunzipSync(gzGet.body).toString()).toBe("beta");

      const range = await rawRequest(socketPath, "GET", "/files?path=/tmp/b.txt", {
        range: "bytes=1-2",
      });
      expect(range.status).toBe(206);
      expect(range.body.toString()).toBe("et");
    }));

  it("fails downloads of missing paths with 404 and of directories with 400", () =>
    withSandbox(async ({ socketPath }) => {
      const missing = await rawRequest(socketPath, "GET", "/files?path=/nope");
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString())).toEqual({
        code: 404,
        message: "path '/nope' does not exist",
      });
      expect((await rawRequest(socketPath, "GET", "/files?path=/tmp")).status).toBe(400);
      const noPath = await rawRequest(
        socketPath,
        "POST",
        "/files",
        { "content-type": "application/octet-stream" },
        "x",
      );
      expect(noPath.status).toBe(400);
      const badType = await rawRequest(
        socketPath,
        "POST",
        "/files?path=x",
        { "content-type": "text/plain" },
        "x",
      );
      expect(badType.status).toBe(400);
    }));

  it("composes files in order, replaces the destination and deletes the sources", () =>
    withSandbox(async ({ socketPath }) => {
      for (const [p, d] of [
        ["/tmp/p1", "one-"],
        ["/tmp/p2", "two"],
      ]) {
        await rawRequest(
          socketPath,
          "POST",
          `/files?path=${p}`,
          { "content-type": "application/octet-stream" },
          d,
        );
      }
      const res = await rawRequest(
        socketPath,
        "POST",
        "/files/compose",
        { "content-type": "application/json" },
        JSON.stringify({ source_paths: ["/tmp/p1", "/tmp/p2"], destination: "/tmp/out/all" }),
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString())).toEqual({
        path: "/tmp/out/all",
        name: "all",
        type: "file",
      });
      expect(
        (await rawRequest(socketPath, "GET", "/files?path=/tmp/out/all")).body.toString(),
      ).toBe("one-two");
      expect((await rawRequest(socketPath, "GET", "/files?path=/tmp/p1")).status).toBe(404);
      const missing = await rawRequest(
        socketPath,
        "POST",
        "/files/compose",
        {},
        JSON.stringify({ source_paths: ["/tmp/p1"], destination: "/tmp/x" }),
      );
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString()).message).toBe("source file not found: /tmp/p1");
      const same = await rawRequest(
        socketPath,
        "POST",
        "/files/compose",
        {},
        JSON.stringify({ source_paths: ["/tmp/out/all"], destination: "/tmp/out/all" }),
      );
      expect(same.status).toBe(400);
    }));

  it("fails a compose whose source cannot be read with 400 naming it, writing nothing", () =>
    withSandbox(async ({ socketPath }) => {
      // /proc/self/mem is a regular file by stat, but reading it from offset 0 fails (EIO).
      const res = await rawRequest(
        socketPath,
        "POST",
        "/files/compose",
        { "content-type": "application/json" },
        JSON.stringify({ source_paths: ["/proc/self/mem"], destination: "/tmp/mem-copy" }),
      );
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body.toString()).message).toBe(
        "a source cannot be read (/proc/self/mem: Input/output error): compose only sources whose content can be read",
      );
      expect((await rawRequest(socketPath, "GET", "/files?path=/tmp/mem-copy")).status).toBe(404);
    }));

  it("extracts a gzipped tar archive into a directory owned by the user", () =>
    withSandbox(async ({ socketPath }) => {
      const src = fs.mkdtempSync(path.join(os.tmpdir(), "agent-tar-"));
      fs.mkdirSync(path.join(src, "d"));
      fs.writeFileSync(path.join(src, "d", "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
      fs.writeFileSync(path.join(src, "top.txt"), "t");
      const chunks: Buffer[] = [];
      for await (const c of tar.c({ cwd: src, gzip: true }, [
        "d",
        "top.txt",
      ]) as AsyncIterable<Buffer>)
        chunks.push(c);
      fs.rmSync(src, { recursive: true });
      const res = await rawRequest(
        socketPath,
        "POST",
        "/_sandbox-iac/extract?path=/home/user/app&username=user",
        {},
        Buffer.concat(chunks),
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString())).toEqual({ files: 2 });
      const { fs: fsClient } = agentClients(socketPath);
      const { entry } = await fsClient.stat({ path: "/home/user/app/d/run.sh" });
      expect(entry).toMatchObject({ owner: "user", mode: 0o755 });
    }));
});

describe("access token", () => {
  it("fails requests without the token once /init set one, except health, init and files", () =>
    withSandbox(async ({ socketPath }) => {
      expect((await rawRequest(socketPath, "POST", "/init", {}, initBody())).status).toBe(204);
      const denied = await rawRequest(socketPath, "GET", "/envs");
      expect(denied.status).toBe(401);
      expect(JSON.parse(denied.body.toString())).toEqual({
        code: 401,
        message:
          "unauthorized access, please provide a valid access token or method signing if supported",
      });
      expect(
        (await rawRequest(socketPath, "GET", "/envs", { "x-access-token": "wrong" })).status,
      ).toBe(401);
      expect(
        (await rawRequest(socketPath, "GET", "/envs", { "x-access-token": "tok-123" })).status,
      ).toBe(200);
      expect((await rawRequest(socketPath, "GET", "/health")).status).toBe(204);
      const rpc = await rawRequest(
        socketPath,
        "POST",
        "/process.Process/List",
        { "content-type": "application/json" },
        "{}",
      );
      expect(rpc.status).toBe(401);
      const rpcOk = await rawRequest(
        socketPath,
        "POST",
        "/process.Process/List",
        { "content-type": "application/json", "x-access-token": "tok-123" },
        "{}",
      );
      expect(rpcOk.status).toBe(200);
    }));

  it("accepts signed file URLs and fails expired or forged signatures", () =>
    withSandbox(async ({ socketPath }) => {
      await rawRequest(socketPath, "POST", "/init", {}, initBody());
      const wsig = filesSignature({
        path: "s.txt",
        operation: "write",
        user: "",
        accessToken: "tok-123",
      });
      const up = await rawRequest(
        socketPath,
        "POST",
        `/files?path=s.txt&signature=${encodeURIComponent(wsig)}`,
        { "content-type": "application/octet-stream" },
        "signed",
      );
      expect(up.status).toBe(200);
      const exp = String(Math.floor(Date.now() / 1000) + 60);
      const rsig = filesSignature({
        path: "s.txt",
        operation: "read",
        user: "user",
        accessToken: "tok-123",
        expiration: exp,
      });
      const get = await rawRequest(
        socketPath,
        "GET",
        `/files?path=s.txt&username=user&signature=${encodeURIComponent(rsig)}&signature_expiration=${exp}`,
      );
      expect(get.body.toString()).toBe("signed");
      const old = String(Math.floor(Date.now() / 1000) - 10);
      const expired = await rawRequest(
        socketPath,
        "GET",
        `/files?path=s.txt&signature=${encodeURIComponent(filesSignature({ path: "s.txt", operation: "read", user: "", accessToken: "tok-123", expiration: old }))}&signature_expiration=${old}`,
      );
      expect(expired.status).toBe(401);
      expect(JSON.parse(expired.body.toString()).message).toBe("signature is already expired");
      const forged = await rawRequest(
        socketPath,
        "GET",
        `/files?path=s.txt&signature=${encodeURIComponent(wsig)}`,
      );
      expect(forged.status).toBe(401);
      expect(
        (await rawRequest(socketPath, "GET", "/files?path=s.txt", { "x-access-token": "tok-123" }))
          .status,
      ).toBe(200);
      expect(
        (await rawRequest(socketPath, "GET", "/files?path=s.txt", { "x-access-token": "nope" }))
          .status,
      ).toBe(401);
    }));

  it("fails a re-init that carries a different token, and accepts one with the current token", () =>
    withSandbox(async ({ socketPath }) => {
      await rawRequest(socketPath, "POST", "/init", {}, initBody());
      const bad = await rawRequest(
        socketPath,
        "POST",
        "/init",
        { "x-access-token": "other" },
        initBody({ accessToken: "new" }),
      );
      expect(bad.status).toBe(401);
      const ok = await rawRequest(
        socketPath,
        "POST",
        "/init",
        { "x-access-token": "tok-123" },
        initBody({ accessToken: "new", envVars: { B: "2" } }),
      );
      expect(ok.status).toBe(204);
      const envs = await rawRequest(socketPath, "GET", "/envs", { "x-access-token": "new" });
      expect(JSON.parse(envs.body.toString())).toEqual({ E2B_SANDBOX: "true", B: "2" });
    }));
});
