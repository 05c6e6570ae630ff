/**
 * The setup step of the Provisioner egress scenarios (Terraform and Pulumi):
 * a Node program run inside the sandbox that exits 0 only when the stand-in
 * mirror (`allowed.test`) saw the header a `network.rules` entry injects (its
 * sha256, as the stand-in's `/headers` answers it), was reached through the
 * SOCKS proxy (its `/peer`), and another name (`other.test`) is refused. It
 * connects to the stand-in's address with the name as SNI and Host: the
 * sandbox's own resolver is the host's, which does not know the test names
 * (the service's is the stand-in's).
 */
import { createHash } from "node:crypto";
import { NAMES } from "./stand-in-names";
import { SOCKS } from "./stand-in-socks";

/** The program's source; run it with the header's expected {@link headerSha} as its argument. */
export const MIRROR_PROBE = `
const https = require("https");
const get = (name, path) => new Promise((resolve) => {
  https.get({ host: "${NAMES.address}", servername: name, headers: { host: name }, path, timeout: 8000 }, (res) => {
    let b = ""; res.on("data", (d) => (b += d)); res.on("end", () => resolve(b));
  }).on("error", (e) => resolve("failed " + (e.code || e.message)));
});
(async () => {
  const headers = JSON.parse(await get("allowed.test", "/headers"));
  const peer = await get("allowed.test", "/peer");
  const other = await get("other.test", "/");
  const ok = headers.authorization === process.argv[2] && peer === "${SOCKS.address}" && other.startsWith("failed");
  console.log(JSON.stringify({ authorization: headers.authorization, peer, other }));
  process.exit(ok ? 0 : 1);
})();`;

/** `sha256:<hex>` of a header value, as the stand-in's `/headers` shows `authorization`. */
export function headerSha(value: string): string {
  return `sha256:${createHash("sha256").update(value).digest("hex")}`;
}
