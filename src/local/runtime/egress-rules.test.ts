import { cidrContains, openResolvers } from "./egress-rules";

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
  const rules = (r: { internet?: boolean; allowOut?: string[]; denyOut?: string[] }) => ({
    internet: r.internet ?? true,
    allowOut: r.allowOut ?? [],
    denyOut: r.denyOut ?? [],
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
});
