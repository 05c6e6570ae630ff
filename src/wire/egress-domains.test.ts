import { matchDomainEntry, normalizeDomainEntry, normalizeRequestedName } from "./egress-domains";

describe("normalizeDomainEntry()", () => {
  it.each([
    ["API.Example.com", "api.example.com"],
    ["*.GitHub.com", "*.github.com"],
    ["*.com", "*.com"],
    ["_dmarc.example.com", "_dmarc.example.com"],
  ])("accepts %j as %j", (entry, normalized) => {
    expect(normalizeDomainEntry(entry)).toBe(normalized);
  });

  it.each([
    "*",
    "*.",
    "a.*.example.com",
    "**.example.com",
    "example.com.",
    "-a.example.com",
    "1.2.3.4",
    "",
    "a b.com",
    `${"a".repeat(64)}.com`,
  ])("refuses %j", (entry) => {
    expect(normalizeDomainEntry(entry)).toBeUndefined();
  });
});

describe("normalizeRequestedName()", () => {
  it("lower-cases and drops one trailing dot; refuses address literals and garbage", () => {
    expect(normalizeRequestedName("Api.Example.COM.")).toBe("api.example.com");
    expect(normalizeRequestedName("198.51.100.2")).toBeUndefined();
    expect(normalizeRequestedName("a\u0000b.com")).toBeUndefined();
  });
});

describe("matchDomainEntry()", () => {
  const entries = ["api.example.com", "*.example.com", "*.eu.example.com"];

  it("prefers the exact entry over a wildcard that also matches", () => {
    expect(matchDomainEntry(entries, "api.example.com")).toBe("api.example.com");
  });

  it("then the longest matching wildcard suffix", () => {
    expect(matchDomainEntry(entries, "a.eu.example.com")).toBe("*.eu.example.com");
    expect(matchDomainEntry(entries, "a.b.us.example.com")).toBe("*.example.com");
  });

  it("matches subdomains at any depth, never the apex nor a look-alike suffix", () => {
    expect(matchDomainEntry(["*.github.com"], "x.y.github.com")).toBe("*.github.com");
    expect(matchDomainEntry(["*.github.com"], "github.com")).toBeUndefined();
    expect(matchDomainEntry(["*.github.com"], "evilgithub.com")).toBeUndefined();
  });
});
