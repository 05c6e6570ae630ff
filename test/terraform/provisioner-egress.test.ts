/**
 * A Provisioner whose setup step may reach only its package mirror, with a
 * `Secret` injected, through the real terraform binary: `network` with
 * `allow_out` (a domain), `deny_out`, `rules` (one entry per domain, its
 * header filled with `$${e2b.secrets.NAME}`) and `egress_proxy` (Dante on the
 * stand-in internet); a domain given twice or a bad header name fail the
 * plan first, in HCL names. The step itself checks, inside the sandbox, that the mirror
 * got the header (its sha256), that it was reached through the proxy, and
 * that another name is refused; terraform fails the apply otherwise. The
 * secret's value and the proxy's password never appear in terraform's
 * output, and the Provisioner's state holds the placeholder only.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";
import { headerSha, MIRROR_PROBE } from "../isolation/mirror-probe";
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
const KEY_SHA = headerSha(`Bearer ${KEY}`);

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
    rules = [
      { domain = "allowed.test", headers = { Authorization = "Bearer $\${e2b.secrets.mirror-key}" } },
    ]
    egress_proxy = {
      address  = "${SOCKS.address}:${SOCKS.port}"
      username = "${SOCKS.username}"
      password = var.proxy_password
    }
  }
  depends_on = [sandboxiac_secret.mirror]
}
`;

/** {@link HCL} with a domain given twice (in another case) and a header name with a space. */
const BAD_RULES_HCL = HCL.replace("Authorization =", '"X Key" = "1", Authorization =').replace(
  "    ]\n    egress_proxy",
  '      { domain = "Allowed.TEST", headers = { "X-Other" = "1" } },\n    ]\n    egress_proxy',
);

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
      await names?.close();
      await inet?.close();
    },
  });
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace> | undefined;

  phase(
    "fails the plan on a domain given twice and a bad header name, in HCL names, before anything exists",
    async () => {
      ws = tf.workspace(BAD_RULES_HCL, { TF_VAR_mirror_key: KEY, TF_VAR_proxy_password: PASSWORD });
      writeFileSync(path.join(ws.dir, "probe.js"), MIRROR_PROBE);
      await ws.init();
      const plan = await ws.tf("plan", "-input=false", "-no-color");
      expect(plan.code).toBe(1);
      const text = plan.output.replace(/\s+/g, " ");
      expect(text).toContain(
        'network.rules[1].domain repeats the domain of rules[0] ("allowed.test"; domains are case-insensitive): give each domain once, with all its headers in that entry, got "Allowed.TEST"',
      );
      expect(text).toContain(
        'network.rules[0].headers["X Key"] header name "X Key" is not an HTTP token',
      );
      expect(text).not.toContain(PASSWORD);
      expect((await tf.svc.call("GET", "/sandboxes")).body).toEqual([]);
      expect((await tf.svc.call("GET", "/secrets")).body).toEqual([]);
    },
  );

  phase("plans without showing the secret or the proxy password", async () => {
    ws!.write(HCL);
    const plan = await ws!.tf("plan", "-input=false", "-no-color");
    expect(plan.code).toBe(0);
    expect(plan.output).toContain("e2b.secrets.mirror-key");
    expect(plan.output).toMatch(/password\s+=\s+\(sensitive value\)/);
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
      // The Provisioner's state holds the rule as written, with the placeholder, never the value.
      expect((p.network as { rules: unknown }).rules).toEqual([
        { domain: "allowed.test", headers: { Authorization: "Bearer ${e2b.secrets.mirror-key}" } },
      ]);
      expect(JSON.stringify(p)).not.toContain(KEY);
      // The password is a sensitive attribute (terraform keeps those in its state file, never shows them).
      const state = JSON.parse(ws!.stateText()) as {
        resources: Array<{ type: string; instances: Array<{ sensitive_attributes: unknown }> }>;
      };
      const provisioner = state.resources.find((r) => r.type === "sandboxiac_provisioner")!;
      expect(JSON.stringify(provisioner.instances[0].sensitive_attributes)).toMatch(
        /"network".*"egress_proxy".*"password"/,
      );
      expect(socks!.log()).toContain(`username%${SOCKS.username}@`);
    },
  );
});
