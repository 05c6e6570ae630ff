/**
 * The typed sandbox client against the REAL local service: file transfer
 * (streamed, gzip), modes, small reads and compose.
 */
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { createSandboxClient, type SandboxClient } from "../../src/client/sandbox";
import type { TestService } from "../support/service";
import { failureOf, useSandboxClientFixture } from "./sandbox-client.support";

jest.setTimeout(120_000);

let client: SandboxClient;
let svc: TestService;
let workDir: string;
let sandboxID: string;
let token: string;

useSandboxClientFixture((fx) => ({ client, svc, workDir, sandboxID, token } = fx));

describe("file transfer", () => {
  const SIZE = 64 * 1024 * 1024;
  let bigFile: string;
  let bigSha: string;

  beforeAll(async () => {
    bigFile = path.join(workDir, "big.bin");
    const hash = createHash("sha256");
    const out = fs.createWriteStream(bigFile);
    for (let written = 0; written < SIZE; written += 1024 * 1024) {
      const chunk = randomBytes(1024 * 1024);
      hash.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
    }
    await new Promise<void>((resolve, reject) => {
      out.once("error", reject);
      out.end(() => resolve());
    });
    bigSha = hash.digest("hex");
  });

  /** A fetch that passes everything through and records what went over the wire. */
  function observingFetch() {
    const seen = {
      requestBodyIsStream: false,
      maxChunk: 0,
      chunks: 0,
      requestEncoding: "",
      responseEncoding: "",
    };
    const observed: typeof fetch = async (input, init) => {
      seen.requestEncoding = new Headers(init?.headers).get("content-encoding") ?? "";
      let body = init?.body;
      if (body instanceof ReadableStream) {
        seen.requestBodyIsStream = true;
        body = body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              seen.chunks++;
              seen.maxChunk = Math.max(seen.maxChunk, chunk.byteLength);
              controller.enqueue(chunk);
            },
          }),
        );
      }
      const res = await fetch(input, { ...init, body: body ?? null });
      seen.responseEncoding = res.headers.get("content-encoding") ?? "";
      return res;
    };
    return { seen, observed };
  }

  function clientWith(fetchImpl: typeof fetch): SandboxClient {
    return createSandboxClient({
      sandboxID,
      accessToken: token,
      baseUrl: svc.sandboxUrl,
      fetch: fetchImpl,
    });
  }

  async function sha256Of(file: string): Promise<string> {
    const hash = createHash("sha256");
    for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  }

  it("streams a 64 MiB upload from disk in small chunks and downloads it back intact", async () => {
    const { seen, observed } = observingFetch();
    const c = clientWith(observed);
    const written = await c.uploadFile(bigFile, "big/big.bin");
    expect(written).toMatchObject({ path: "/home/user/big/big.bin", name: "big.bin" });
    // The body was a stream read in 1 MiB chunks, never one 64 MiB buffer.
    // (That reading follows the server's pace is shown in files-transfer.test.ts;
    // process memory is no measure here: freed chunks wait for the GC.)
    expect(seen.requestBodyIsStream).toBe(true);
    expect(seen.maxChunk).toBeLessThanOrEqual(1024 * 1024);
    expect(seen.chunks).toBeGreaterThanOrEqual(SIZE / (1024 * 1024));
    expect((await c.stat("big/big.bin")).size).toBe(SIZE);

    const target = path.join(workDir, "big.down");
    await c.downloadFile("big/big.bin", target);
    expect(fs.statSync(target).size).toBe(SIZE);
    expect(await sha256Of(target)).toBe(bigSha);
    const inSandbox = await c.run("sha256sum big/big.bin");
    expect(inSandbox.stdout.split(" ")[0]).toBe(bigSha);
  });

  it("streams an upload through node:http when no fetch is injected, with fetch's answers and failures", async () => {
    // The default client pipes the file into node:http (node-upload.ts), not fetch.
    const written = await client.uploadFile(bigFile, "nodehttp/big.bin");
    expect(written).toMatchObject({ path: "/home/user/nodehttp/big.bin", name: "big.bin" });
    const inSandbox = await client.run("sha256sum nodehttp/big.bin");
    expect(inSandbox.stdout.split(" ")[0]).toBe(bigSha);
    // A refused write (its parent is a file) fails as it does through fetch: same code, same status.
    const local = path.join(workDir, "refused.txt");
    fs.writeFileSync(local, "nowhere to go\n");
    const under = "nodehttp/big.bin/refused.txt";
    const viaNode = await failureOf(client.uploadFile(local, under));
    const viaFetch = await failureOf(clientWith(fetch).uploadFile(local, under));
    expect(viaNode.code).toBe(viaFetch.code);
    expect(viaNode.status).toBe(viaFetch.status);
    expect(viaNode.status).toBeGreaterThanOrEqual(400);
  });

  it("compresses an upload with gzip on the fly", async () => {
    const { seen, observed } = observingFetch();
    const local = path.join(workDir, "text.txt");
    fs.writeFileSync(local, "compress me\n".repeat(10_000));
    await clientWith(observed).uploadFile(local, "gz/text.txt", { gzip: true });
    expect(seen.requestEncoding).toBe("gzip");
    expect(await client.readText("gz/text.txt")).toBe("compress me\n".repeat(10_000));
  });

  it("downloads with gzip and writes the decoded content", async () => {
    const { seen, observed } = observingFetch();
    const target = path.join(workDir, "gz.down");
    await clientWith(observed).downloadFile("gz/text.txt", target, { gzip: true });
    expect(seen.responseEncoding).toBe("gzip");
    expect(fs.readFileSync(target, "utf8")).toBe("compress me\n".repeat(10_000));
  });

  it("sets the mode of an uploaded file", async () => {
    const local = path.join(workDir, "script.sh");
    fs.writeFileSync(local, "#!/bin/sh\necho ran\n");
    await client.uploadFile(local, "bin/script.sh", { mode: 0o755 });
    expect((await client.stat("bin/script.sh")).mode).toBe(0o755);
    expect((await client.run("./bin/script.sh")).stdout).toBe("ran\n");
  });

  it("reads small files as bytes and text", async () => {
    await client.uploadBytes("small/b.bin", new Uint8Array([0, 1, 2, 255]));
    expect(Array.from(await client.readBytes("small/b.bin"))).toEqual([0, 1, 2, 255]);
    await client.uploadBytes("small/t.txt", "héllo");
    expect(await client.readText("small/t.txt")).toBe("héllo");
  });

  it("fails with not_found when reading or downloading a missing file", async () => {
    const err = await failureOf(client.readText("no/such.txt"));
    expect(err).toMatchObject({
      code: "not_found",
      status: 404,
      operation: "files.read",
      resourceId: "no/such.txt",
    });
    const down = await failureOf(client.downloadFile("no/such.txt", path.join(workDir, "never")));
    expect(down.code).toBe("not_found");
  });

  it("composes parts in order into one file and deletes the parts", async () => {
    await client.uploadBytes("parts/1", "alpha-");
    await client.uploadBytes("parts/2", "beta-");
    await client.uploadBytes("parts/3", "gamma");
    const entry = await client.compose(
      ["parts/1", "/home/user/parts/2", "parts/3"],
      "parts/all.txt",
    );
    expect(entry).toMatchObject({ path: "/home/user/parts/all.txt", name: "all.txt" });
    expect(await client.readText("parts/all.txt")).toBe("alpha-beta-gamma");
    expect(await client.exists("parts/1")).toBe(false);
    const missing = await failureOf(client.compose(["parts/none"], "parts/x"));
    expect(missing.code).toBe("not_found");
  });
});
