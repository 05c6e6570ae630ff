/**
 * A Provisioner whose setup step may reach only its package mirror, with a
 * `Secret` injected, through the real terraform binary: `network` with
 * `allow_out` (a domain), `deny_out`, `rules` (a header filled with
 * `$${e2b.secrets.NAME}`) and `egress_proxy` (Dante on the stand-in
 * internet). The step itself checks, inside the sandbox, that the mirror
 * got the header (its sha256), that it was reached through the proxy, and
 * that another name is refused; terraform fails the apply otherwise. The
 * secret's value and the proxy's password never appear in terraform's
 * output, and the Provisioner's state holds the placeholder only.
 */
import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { NAMES, startStandInNames, type StandInNames } from "../isolation/stand-in-names";
import {
  startStandInInternet,
  STAND_IN_WAIT_MS,
  type StandIn,
} from "../isolation/stand-in-internet";
import { SOCKS, startStandInSocks, type StandInSocks } from "../isolation/stand-in-socks";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform Provisioner egress tests are",
);

jest.setTimeout(300_000);

const KEY = `sk-mirror-${randomBytes(12).toString("hex")}`;
const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;
const KEY_SHA = `sha256:${createHash("sha256").update(`Bearer ${KEY}`).digest("hex")}`;

const HCL = `${REQUIRED_PROVIDERS}
variable "mirror_key" {
  type      = string
  sensitive = true
}
variable "proxy_password" {
  type      = string
  sensitive = true
}
resource "sandboxiac_secret" "mirror" {
  name  = "mirror-key"
  value = var.mirror_key
}
resource "sandboxiac_provisioner" "p" {
  template = "base"
  files    = [{ source = "probe.js", destination = "/home/user/probe.js" }]
  commands = [{ run = "/.sandbox-iac/node /home/user/probe.js ${KEY_SHA}" }]
  network = {
    allow_out = ["allowed.test"]
    deny_out  = ["0.0.0.0/0"]
    rules = {
      "allowed.test" = [{ transform = { headers = { Authorization = "Bearer $\${e2b.secrets.mirror-key}" } } }]
    }
    egress_proxy = {
      address  = "${SOCKS.address}:${SOCKS.port}"
      username = "${SOCKS.username}"
      password = var.proxy_password
    }
  }
  depends_on = [sandboxiac_secret.mirror]
}
`;

/**
 * The setup step: exits 0 only when the mirror saw the header through the
 * proxy and another name is refused. It connects to the stand-in's address
 * with the name as SNI and Host (the sandbox's own resolver is the host's,
 * which does not know the test names; the service's is the stand-in's).
 */
const PROBE = `
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

let inet: StandIn | undefined;
let names: StandInNames | undefined;
let socks: StandInSocks | undefined;

describeWithTerraform(`a Provisioner's egress with a Secret (${version ?? "no terraform"})`, () => {
  // Before the fixture's service starts: it resolves names with the stand-in's dnsmasq.
  beforeAll(async () => {
    inet = await startStandInInternet();
    names = await startStandInNames(inet);
    socks = await startStandInSocks(inet, PASSWORD);
  }, STAND_IN_WAIT_MS + 60_000);
  const tf = terraformFixture({
    service: () => ({ dnsResolvers: [NAMES.otherAddress], edgeUpstreamCa: [names!.caPem] }),
    beforeClose: async () => {
      await ws?.tf("destroy", "-auto-approve", "-input=false");
      await socks?.close();
      names?.close();
      inet?.close();
    },
  });
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace> | undefined;

  phase("plans without showing the secret or the proxy password", async () => {
    ws = tf.workspace(HCL, { TF_VAR_mirror_key: KEY, TF_VAR_proxy_password: PASSWORD });
    writeFileSync(path.join(ws.dir, "probe.js"), PROBE);
    await ws.init();
    const plan = await ws.tf("plan", "-input=false");
    expect(plan.code).toBe(0);
    expect(plan.output).toContain("e2b.secrets.mirror-key");
    expect(plan.output).not.toContain(KEY);
    expect(plan.output).not.toContain(PASSWORD);
  });

  phase(
    "runs the setup step, which reaches only the allowed mirror, through the proxy, with the secret injected",
    async () => {
      const applied = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(applied.output).not.toContain(KEY);
      expect(applied.output).not.toContain(PASSWORD);
      if (applied.code !== 0) throw new Error(`apply failed:\n${applied.output}`);
      const p = ws!.resource("sandboxiac_provisioner.p")!;
      expect(p.commands_run).toBe(1);
      // The Provisioner's state holds the placeholder, never the value.
      expect(JSON.stringify(p)).toContain("Bearer ${e2b.secrets.mirror-key}");
      expect(JSON.stringify(p)).not.toContain(KEY);
      expect(socks!.log()).toContain(`username%${SOCKS.username}@`);
    },
  );
});
