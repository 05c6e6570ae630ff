import { randomBytes } from "node:crypto";
import * as zlib from "node:zlib";
import { startTestSandbox, type TestSandbox } from "../../../test/support/agent/bwrap-sandbox";
import { rawRequest } from "../../../test/support/agent/clients";
import { downloadEncoding } from "./download-encoding";

describe("downloadEncoding", () => {
  it("gzips only when gzip is the one coding asked for, or identity is refused", () => {
    expect(downloadEncoding(undefined, false)).toBe("identity");
    expect(downloadEncoding("", false)).toBe("identity");
    expect(downloadEncoding("gzip", false)).toBe("gzip");
    expect(downloadEncoding("GZip;q=0.8", false)).toBe("gzip");
    expect(downloadEncoding("gzip, identity", false)).toBe("gzip");
    // What Node's fetch (undici) sends by default over http and https.
    expect(downloadEncoding("gzip, deflate", false)).toBe("identity");
    expect(downloadEncoding("br, gzip, deflate", false)).toBe("identity");
    expect(downloadEncoding("*", false)).toBe("identity");
    expect(downloadEncoding("gzip;q=0", false)).toBe("identity");
    expect(downloadEncoding("gzip, deflate;q=0", false)).toBe("gzip");
    expect(downloadEncoding("deflate, identity;q=0", false)).toBe("unacceptable");
    expect(downloadEncoding("gzip, deflate, identity;q=0", false)).toBe("gzip");
    expect(downloadEncoding("*;q=0", false)).toBe("unacceptable");
    expect(downloadEncoding("*;q=0, gzip", false)).toBe("gzip");
  });

  it("answers Range requests from the file's own bytes", () => {
    expect(downloadEncoding("gzip", true)).toBe("identity");
    expect(downloadEncoding("gzip, identity;q=0", true)).toBe("unacceptable");
  });
});

describe("GET /files content coding on the wire", () => {
  let sbx: TestSandbox;
  // Incompressible and larger than every read and zlib output chunk, so the
  // round trip crosses many chunks of both paths.
  const data = randomBytes(3 * 1024 * 1024 + 17);

  beforeAll(async () => {
    sbx = await startTestSandbox();
    const up = await rawRequest(
      sbx.socketPath,
      "POST",
      "/files?path=/tmp/rand.bin",
      { "content-type": "application/octet-stream" },
      data,
    );
    expect(up.status).toBe(200);
  });
  afterAll(() => sbx.stop());

  const get = (headers: Record<string, string>) =>
    rawRequest(sbx.socketPath, "GET", "/files?path=/tmp/rand.bin", headers);

  it("sends the raw bytes with a Content-Length when no coding is asked for", async () => {
    const res = await get({});
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers["content-length"]).toBe(String(data.length));
    expect(res.body.equals(data)).toBe(true);
  });

  it("sends the raw bytes to fetch's default 'gzip, deflate' (the SDK's default read)", async () => {
    for (const accept of ["gzip, deflate", "br, gzip, deflate", "identity"]) {
      const res = await get({ "accept-encoding": accept });
      expect({ accept, encoding: res.headers["content-encoding"] }).toEqual({
        accept,
        encoding: undefined,
      });
      expect(res.headers.vary).toBe("Accept-Encoding");
      expect(res.body.equals(data)).toBe(true);
    }
  });

  it("gzips when gzip alone is asked for (the SDK's gzip: true), and the bytes round-trip", async () => {
    const res = await get({ "accept-encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.headers["content-length"]).toBeUndefined();
    expect(zlib.gunzipSync(res.body).equals(data)).toBe(true);
  });

  it("gzips when identity is refused", async () => {
    const res = await get({ "accept-encoding": "gzip, deflate, identity;q=0" });
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(zlib.gunzipSync(res.body).equals(data)).toBe(true);
  });

  it("answers a Range request with identity bytes even when gzip is asked for", async () => {
    const res = await get({ "accept-encoding": "gzip", range: "bytes=100-199" });
    expect(res.status).toBe(206);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.body.equals(data.subarray(100, 200))).toBe(true);
  });

  it("refuses with 406 when neither identity nor gzip is acceptable", async () => {
    const res = await get({ "accept-encoding": "br, identity;q=0" });
    expect(res.status).toBe(406);
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: 406 });
  });
});
