import { SandboxIacError } from "../../errors";
import { explainTableFailure, missingNftFeature, type NftFeature } from "./nft-features";

/** A feature no kernel has: a rule naming a set the probe table does not define. */
const absent: NftFeature = {
  feature: "a feature this kernel lacks (test)",
  statement: "ip saddr @no_such_set accept",
  fix: "nothing to fix (test)",
};

describe("the kernel features of the service's nftables table", () => {
  it("finds socket matching and tproxy on this kernel (the service starts here)", async () => {
    expect(await missingNftFeature()).toBeUndefined();
  });

  it("names the missing feature, nft's words and the fix instead of a bare nft failure", async () => {
    const original = new Error("host command nft -f - failed: No such file or directory");
    const err = await explainTableFailure(original, [absent]);
    expect(err).toBeInstanceOf(SandboxIacError);
    expect((err as SandboxIacError).code).toBe("unsupported");
    expect((err as Error).message).toMatch(
      /needs a feature this kernel lacks \(test\) for its network rules, and this kernel refuses it \(nft: .*no_such_set.*\): nothing to fix \(test\), or point E2B_API_URL at/s,
    );
  });

  it("leaves an error with another cause as it was", async () => {
    const original = new Error("nft: syntax error");
    expect(await explainTableFailure(original)).toBe(original);
  });
});
