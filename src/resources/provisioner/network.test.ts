import { sandboxNetworkOf } from "./network";
import { provisionerLifecycle } from "./provisioner.lifecycle";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const AUTH = { Authorization: "Bearer ${e2b.secrets.mirror-key}" };

/** The failures of a Provisioner from `base` with `rules`, as `property: reason`. */
function ruleFailures(rules: unknown, isUnknown?: (v: unknown) => boolean): string[] {
  return provisionerLifecycle
    .check({ template: "base", network: { rules } }, isUnknown ? { isUnknown } : {})
    .failures.map((f) => `${f.property}: ${f.reason}`);
}

describe("provisioner check of network.rules", () => {
  it("accepts one entry per domain, exact or wildcard, with secret placeholders", () => {
    expect(
      ruleFailures([
        { domain: "mirror.test", headers: AUTH },
        { domain: "*.mirror.test", headers: { "X-Api-Key": "${e2b.secrets.other}" } },
      ]),
    ).toEqual([]);
  });

  it("fails when a domain is given twice, also in another case, naming the first entry", () => {
    expect(
      ruleFailures([
        { domain: "mirror.test", headers: AUTH },
        { domain: "other.test", headers: AUTH },
        { domain: "Mirror.TEST", headers: { "X-Other": "1" } },
      ]),
    ).toEqual([
      expect.stringMatching(
        /^network\.rules\.2\.domain: repeats the domain of rules\[0\] \("mirror\.test"; .*give each domain once, with all its headers in that entry, got "Mirror.TEST"$/,
      ),
    ]);
  });

  it("fails when a domain is empty, an address or a bare wildcard, saying what a domain is", () => {
    const failures = ruleFailures(
      ["", "198.51.100.7", "*"].map((d) => ({ domain: d, headers: AUTH })),
    );
    expect(failures).toHaveLength(3);
    failures.forEach((f, i) => {
      expect(f).toMatch(new RegExp(`^network\\.rules\\.${i}\\.domain: must be a DNS name such as`));
    });
  });

  it("fails on a header name that is not an HTTP token, a framing header, or a second spelling of one", () => {
    const failures = ruleFailures([
      {
        domain: "mirror.test",
        headers: { "Bad Header": "x", Host: "elsewhere.test", ...AUTH, authorization: "y" },
      },
    ]);
    expect(failures).toEqual([
      expect.stringMatching(
        /^network\.rules\.0\.headers\.Bad Header: header name "Bad Header" is not an HTTP token: a rule sets headers such as "Authorization"/,
      ),
      expect.stringMatching(/^network\.rules\.0\.headers\.Host: header "Host" frames the request/),
      expect.stringMatching(
        /^network\.rules\.0\.headers\.authorization: names the same header as "Authorization" \(header names are case-insensitive\)/,
      ),
    ]);
  });

  it("fails on the old map shape, saying a list is expected", () => {
    const failures = ruleFailures({ "mirror.test": [{ transform: { headers: AUTH } }] });
    expect(failures).toEqual([expect.stringMatching(/^network\.rules: .*array/)]);
  });

  it("leaves a domain still unknown during preview to be checked once known", () => {
    expect(
      ruleFailures(
        [
          { domain: UNKNOWN, headers: AUTH },
          { domain: UNKNOWN, headers: AUTH },
        ],
        (v) => v === UNKNOWN,
      ),
    ).toEqual([]);
  });
});

describe("sandboxNetworkOf()", () => {
  it("gives the service E2B's map: each domain's headers as its one rule", () => {
    expect(
      sandboxNetworkOf({
        allowOut: ["mirror.test"],
        denyOut: ["0.0.0.0/0"],
        rules: [
          { domain: "mirror.test", headers: AUTH },
          { domain: "*.cdn.test", headers: { "X-Token": "t" } },
        ],
        egressProxy: { address: "198.51.100.9:1080", username: "ci", password: "pw" },
      }),
    ).toEqual({
      allowOut: ["mirror.test"],
      denyOut: ["0.0.0.0/0"],
      rules: {
        "mirror.test": [{ transform: { headers: AUTH } }],
        "*.cdn.test": [{ transform: { headers: { "X-Token": "t" } } }],
      },
      egressProxy: { address: "198.51.100.9:1080", username: "ci", password: "pw" },
    });
  });

  it("sends only the fields given", () => {
    expect(sandboxNetworkOf({ allowPublicTraffic: false })).toEqual({ allowPublicTraffic: false });
  });
});
