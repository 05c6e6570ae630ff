/**
 * Names the kernel feature behind a failed nftables ruleset. The service's
 * table uses `socket transparent` and `tproxy` (the egress edge of domain
 * allow-lists, see egress-divert.ts); a kernel built without `nft_socket` or
 * `nft_tproxy` refuses the whole table with nft's bare "No such file or
 * directory", which says nothing about the fix.
 *
 * The check runs only after a failure, so a healthy start pays nothing for
 * it. Each feature is tried alone in a network namespace of its own
 * (`unshare --net`), which disappears with the probe: nothing on the host
 * changes.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { SandboxIacError } from "../../errors";
import { ENV_VARS } from "../../wire/control";

const OPERATION = "local.start";

/** A kernel feature the table needs: a name, a rule that needs it, and the fix. */
export interface NftFeature {
  /** What the kernel lacks, as a person would search for it. */
  feature: string;
  /** One nft rule statement using only that feature (in a prerouting filter chain). */
  statement: string;
  /** What to do about it. */
  fix: string;
}

/** The features of the service's table beyond plain filtering and NAT. */
const TABLE_FEATURES: readonly NftFeature[] = [
  {
    feature: "nftables socket matching (CONFIG_NFT_SOCKET, module nft_socket)",
    statement: "meta l4proto tcp socket transparent 1 accept",
    fix: "load it with `modprobe nft_socket`, or use a kernel built with it",
  },
  {
    feature: "nftables transparent proxying (CONFIG_NFT_TPROXY, module nft_tproxy)",
    statement: "meta l4proto tcp tproxy ip to 127.0.0.1:1 accept",
    fix: "load it with `modprobe nft_tproxy`, or use a kernel built with it",
  },
];

/** Runs `nft -f -` on `ruleset` in a throwaway network namespace; resolves to nft's error text, or undefined. */
function tryInNewNetns(ruleset: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = execFile("unshare", ["--net", "nft", "-f", "-"], (err, _out, stderr) =>
      resolve(err ? String(stderr).trim() || err.message : undefined),
    );
    child.stdin?.end(ruleset);
  });
}

/**
 * The first of `features` this kernel cannot load into a table, with nft's
 * own words, or undefined when every one loads.
 */
export async function missingNftFeature(
  features: readonly NftFeature[] = TABLE_FEATURES,
): Promise<{ feature: NftFeature; detail: string } | undefined> {
  for (const feature of features) {
    const detail = await tryInNewNetns(
      `table inet probe {\n chain pre {\n  type filter hook prerouting priority mangle; policy accept;\n  ${feature.statement}\n }\n}\n`,
    );
    if (detail !== undefined) return { feature, detail };
  }
  return undefined;
}

/**
 * The error to report for `err`, a failed load of the service's table:
 * an `unsupported` error naming the missing kernel feature and its fix when
 * one is missing, else `err` unchanged.
 */
export async function explainTableFailure(
  err: unknown,
  features: readonly NftFeature[] = TABLE_FEATURES,
): Promise<unknown> {
  const missing = await missingNftFeature(features);
  if (!missing) return err;
  return new SandboxIacError(
    "unsupported",
    `the local sandbox service needs ${missing.feature.feature} for its network rules, and this kernel refuses it (nft: ${missing.detail}): ${missing.feature.fix}, or point ${ENV_VARS.apiUrl} at a remote E2B-compatible service instead of starting the local one`,
    { operation: OPERATION, cause: err },
  );
}
