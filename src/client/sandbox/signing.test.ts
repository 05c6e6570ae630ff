import { SandboxIacError } from "../../errors";
import { createSandboxClient } from "./client";
import { fileSignature } from "./signing";
import { neverFetch, neverTransport } from "../../../test/support/never-transports";

// Vectors computed independently with Python's hashlib:
// "v1_" + base64(sha256(s)).rstrip("=")
describe("fileSignature()", () => {
  it("hashes path:op:user:token without padding when there is no user", () => {
    expect(
      fileSignature({
        path: "/home/user/a.txt",
        operation: "read",
        user: "",
        accessToken: "tok123",
      }),
    ).toBe("v1_byj2OB/vujgbES/1KAKCaR27E+9eOrB6PzeTnIL8L6M");
  });

  it("appends the expiration to the hashed string", () => {
    expect(
      fileSignature({
        path: "/home/user/a.txt",
        operation: "write",
        user: "user",
        accessToken: "tok123",
        expirationUnix: 1700000000,
      }),
    ).toBe("v1_kCwu4usVZBCSzXHSFPk291ud3zHmpwR9v0nRPaSmYqM");
  });

  it("hashes the raw relative path unresolved", () => {
    expect(
      fileSignature({
        path: "file.txt",
        operation: "read",
        user: "root",
        accessToken: "0123456789abcdef",
      }),
    ).toBe("v1_+sXpx35kQq4cuLJ+fU7yOAV1fZSNF63wDmk0vEKeb6Y");
  });
});

describe("downloadUrl() / uploadUrl()", () => {
  const base = {
    sandboxID: "isbx1",
    baseUrl: "http://127.0.0.1:9999",
    transport: neverTransport(),
    fetch: neverFetch(),
  };

  it("signs the download URL with the token and the user from the query", () => {
    const client = createSandboxClient({ ...base, accessToken: "tok123" });
    const url = new URL(client.downloadUrl("/home/user/a.txt"));
    expect(url.origin + url.pathname).toBe("http://127.0.0.1:9999/files");
    expect(url.searchParams.get("path")).toBe("/home/user/a.txt");
    expect(url.searchParams.has("username")).toBe(false);
    expect(url.searchParams.get("signature")).toBe(
      "v1_byj2OB/vujgbES/1KAKCaR27E+9eOrB6PzeTnIL8L6M",
    );
    expect(url.searchParams.has("signature_expiration")).toBe(false);
  });

  it("signs uploads with op write and an expiration from the clock", () => {
    const client = createSandboxClient({ ...base, accessToken: "tok123" });
    const url = new URL(
      client.uploadUrl("/home/user/a.txt", {
        user: "user",
        expiresInSeconds: 100,
        now: () => 1_699_999_900_000,
      }),
    );
    expect(url.searchParams.get("username")).toBe("user");
    expect(url.searchParams.get("signature_expiration")).toBe("1700000000");
    expect(url.searchParams.get("signature")).toBe(
      "v1_kCwu4usVZBCSzXHSFPk291ud3zHmpwR9v0nRPaSmYqM",
    );
  });

  it("leaves the URL unsigned for a sandbox without a token", () => {
    const client = createSandboxClient(base);
    const url = new URL(client.downloadUrl("a.txt", { user: "root" }));
    expect([...url.searchParams.keys()].sort()).toEqual(["path", "username"]);
  });

  it("fails when an expiration is asked for without a token", () => {
    const client = createSandboxClient(base);
    expect(() => client.downloadUrl("a.txt", { expiresInSeconds: 60 })).toThrow(
      expect.objectContaining({ code: "invalid_argument", field: "expiresInSeconds" }),
    );
  });

  it("fails when the path is empty", () => {
    const client = createSandboxClient({ ...base, accessToken: "tok123" });
    let caught: unknown;
    try {
      client.uploadUrl("");
    } catch (err) {
      caught = err;
    }
    expect(SandboxIacError.hasCode(caught, "invalid_argument")).toBe(true);
    expect((caught as SandboxIacError).field).toBe("path");
  });
});
