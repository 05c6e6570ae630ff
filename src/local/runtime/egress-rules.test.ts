import { assertNetwork, cidrContains, openResolvers, splitAllowOut } from "./egress-rules";

describe("cidrContains()", () => {
  it.each([
    ["10.0.0.0/8", "10.255.1.2", true],
    ["10.0.0.0/8", "11.0.0.0", false],
    ["192.0.2.7", "192.0.2.7", true],
    ["192.0.2.7/32", "192.0.2.8", false],
    ["0.0.0.0/0", "255.255.255.255", true],
    ["198.51.100.0/25", "198.51.100.128", false],
  ])("%s contains %s: %s", (cidr, address, expected) => {
    expect(cidrContains(cidr, address)).toBe(expected);
  });
});

describe("openResolvers()", () => {
  const resolvers = ["10.0.0.2", "198.51.100.53"];
  const rules = (r: {
    internet?: boolean;
    allowOut?: string[];
    allowDomains?: string[];
    denyOut?: string[];
  }) => ({
    internet: r.internet ?? true,
    allowOut: r.allowOut ?? [],
    allowDomains: r.allowDomains ?? [],
    denyOut: r.denyOut ?? [],
    rules: {},
  });

  it("opens every resolver, private ones included, when no rule names them", () => {
    expect(openResolvers(resolvers, rules({}))).toEqual(resolvers);
  });

  it("opens none without internet access", () => {
    expect(openResolvers(resolvers, rules({ internet: false }))).toEqual([]);
  });

  it("closes a resolver denyOut covers, and none is left with denyOut 0.0.0.0/0 alone", () => {
    expect(openResolvers(resolvers, rules({ denyOut: ["198.51.100.0/24"] }))).toEqual(["10.0.0.2"]);
    expect(openResolvers(resolvers, rules({ denyOut: ["0.0.0.0/0"] }))).toEqual([]);
  });

  it("opens a resolver allowOut names, even when denyOut covers it (allowOut wins)", () => {
    expect(
      openResolvers(resolvers, rules({ denyOut: ["0.0.0.0/0"], allowOut: ["10.0.0.2/32"] })),
    ).toEqual(["10.0.0.2"]);
  });

  it("opens every resolver when allowOut names a domain, even with denyOut 0.0.0.0/0", () => {
    expect(
      openResolvers(resolvers, rules({ denyOut: ["0.0.0.0/0"], allowDomains: ["example.com"] })),
    ).toEqual(resolvers);
  });
});

describe("splitAllowOut()", () => {
  it("keeps CIDRs apart from domain entries, which it lower-cases once each", () => {
    expect(
      splitAllowOut(["192.0.2.1", "API.Example.com", "*.GitHub.com", "api.example.com"]),
    ).toEqual({
      cidrs: ["192.0.2.1"],
      domains: ["api.example.com", "*.github.com"],
    });
  });
});

describe("assertNetwork()", () => {
  it.each([
    ["allowOut", "*", /DNS name/],
    ["allowOut", "a.*.example.com", /leading wildcard/],
    ["allowOut", "300.1.2.3", /IPv4 address or CIDR/],
    ["allowOut", "2001:db8::1", /IPv6 is not supported/],
    ["denyOut", "example.com", /not supported in denyOut/],
  ])("fails when %s holds %j, saying what is allowed", (key, entry, message) => {
    expect(() => assertNetwork("test", { [key]: [entry] })).toThrow(message);
  });
});
