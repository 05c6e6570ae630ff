import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { makeTestCa } from "../../test/support/test-ca";
import { SandboxIacError } from "../errors";
import { apiUrlOf, resolveAddressing, tlsServerOptions, type TlsMaterial } from "./addressing";

const dirs: string[] = [];
function tlsFor(names: string[]): TlsMaterial {
  const dir = mkdtempSync(path.join(tmpdir(), "addressing-"));
  dirs.push(dir);
  const ca = makeTestCa(dir, names);
  return { cert: readFileSync(ca.certFile, "utf8"), key: readFileSync(ca.keyFile, "utf8") };
}
/** The `invalid_argument` error `fn` throws. */
function expectSandboxIacError(fn: () => unknown, code: "invalid_argument"): SandboxIacError {
  try {
    fn();
  } catch (err) {
    if (SandboxIacError.hasCode(err, code)) return err;
    throw err;
  }
  throw new Error("it was accepted");
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("resolveAddressing", () => {
  it("takes the domain from the certificate's wildcard name, with the port unless 443", () => {
    const tls = tlsFor(["*.Sbx.Example.test", "other.example.test"]);
    expect(resolveAddressing(tls, undefined, 443)).toEqual({
      domain: "sbx.example.test",
      scheme: "https",
    });
    const on8443 = resolveAddressing(tls, undefined, 8443);
    expect(on8443.domain).toBe("sbx.example.test:8443");
    expect(apiUrlOf(on8443)).toBe("https://api.sbx.example.test:8443");
  });

  it("uses a given domain as written, lower-cased, and localhost:<port> over plain HTTP", () => {
    expect(resolveAddressing(undefined, " Team.Example.test ", 3000)).toEqual({
      domain: "team.example.test",
      scheme: "http",
    });
    expect(resolveAddressing(undefined, undefined, 3000).domain).toBe("localhost:3000");
  });

  it("asks for --domain when the certificate has no single wildcard name", () => {
    const err = expectSandboxIacError(
      () => resolveAddressing(tlsFor(["api.example.test"]), undefined, 443),
      "invalid_argument",
    );
    expect(err.message).toContain("wildcard names are none");
    expect(err.message).toContain("--domain sandboxes.example.com");
    expect(resolveAddressing(tlsFor(["api.example.test"]), "example.test", 443).domain).toBe(
      "example.test",
    );
  });

  it("refuses a domain with a scheme or path, naming the option", () => {
    const err = expectSandboxIacError(
      () => resolveAddressing(undefined, "https://example.test/x", 443),
      "invalid_argument",
    );
    expect(err.message).toContain("domain (--domain) must be a host name with an optional :port");
    expect(err.message).toContain('got "https://example.test/x"');
  });

  it("refuses a certificate that is not PEM", () => {
    const err = expectSandboxIacError(
      () => resolveAddressing({ cert: "not a certificate", key: "" }, undefined, 443),
      "invalid_argument",
    );
    expect(err.message).toContain("--tls-cert");
  });

  it("refuses a key that is not the certificate's before anything listens", () => {
    const a = tlsFor(["*.a.test"]);
    const b = tlsFor(["*.b.test"]);
    expect(tlsServerOptions(a)).toEqual({ cert: a.cert, key: a.key });
    const err = expectSandboxIacError(
      () => tlsServerOptions({ cert: a.cert, key: b.key }),
      "invalid_argument",
    );
    expect(err.message).toContain("(--tls-cert, --tls-key) cannot be used together");
    expect(err.message).toContain("key values mismatch");
  });
});
