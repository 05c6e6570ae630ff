/**
 * A Provisioner whose setup step may reach only its package mirror, with a
 * `Secret` injected at the egress edge, through Pulumi (test/harness):
 * `network` with `allowOut` (a domain), `denyOut`, `rules` (one entry per
 * domain, its header naming the secret as `${e2b.secrets.NAME}`) and
 * `egressProxy` (Dante on the stand-in internet, its password given as plain
 * config). The step itself checks, inside the sandbox, that the stand-in
 * mirror got the header with the secret's value (its sha256), through the
 * proxy, and that another name is refused; the up fails otherwise. Neither
 * the secret's value nor the proxy's password is in the state, the outputs or
 * the log in clear.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { up } from "../harness";
import { headerSha, MIRROR_PROBE } from "../isolation/mirror-probe";
import { NAMES, startStandInNames, type StandInNames } from "../isolation/stand-in-names";
import {
  startStandInInternet,
  STAND_IN_WAIT_MS,
  type StandIn,
} from "../isolation/stand-in-internet";
import { SOCKS, startStandInSocks, type StandInSocks } from "../isolation/stand-in-socks";
import { ops, plaintextOccurrences, pulumiStack, stackOptions } from "./support";

jest.setTimeout(600_000);

const KEY = `sk-mirror-${randomBytes(12).toString("hex")}`;
const PASSWORD = `pw-${randomBytes(12).toString("hex")}`;

let inet: StandIn | undefined;
let names: StandInNames | undefined;
let socks: StandInSocks | undefined;

describe("a Provisioner's egress with a Secret through Pulumi", () => {
  // Before the stack's service starts: it resolves names with the stand-in's dnsmasq.
  beforeAll(async () => {
    inet = await startStandInInternet();
    names = await startStandInNames(inet);
    socks = await startStandInSocks(inet, PASSWORD);
  }, STAND_IN_WAIT_MS + 60_000);
  const stack = pulumiStack("provisioner-egress", {
    service: () => ({ dnsResolvers: [NAMES.otherAddress], edgeUpstreamCa: [names!.caPem] }),
    prepare: (dir) => writeFileSync(path.join(dir, "probe.js"), MIRROR_PROBE),
    destroyAfter: true,
  });
  // Registered after the stack's: jest runs afterAll hooks in order, the stack is destroyed first.
  afterAll(async () => {
    await socks?.close();
    await names?.close();
    await inet?.close();
  });

  it("runs the setup step, which reaches only the mirror, through the proxy, with the secret filled in at the edge", async () => {
    const opts = {
      ...stackOptions(stack.svc, stack.dir, {
        mirrorKey: KEY,
        headerSha: headerSha(`Bearer ${KEY}`),
        mirror: "allowed.test",
        proxyAddress: `${SOCKS.address}:${SOCKS.port}`,
        proxyUsername: SOCKS.username,
        proxyPassword: PASSWORD,
      }),
      secretConfig: ["sandbox-iac:apiKey", "mirrorKey"],
    };
    const created = await up(stack.dir, opts);
    expect(created.errors).toEqual([]);
    expect(ops(created).sort()).toEqual(["create mirror", "create setup"]);
    expect(created.outputs["commandsRun"]).toBe(1);
    expect(socks!.log()).toContain(`username%${SOCKS.username}@`);
    // The rule as written, its placeholder in clear; the output is a secret for the password in it.
    const network = created.outputs["network"] as { rules: unknown };
    expect(network.rules).toEqual([
      { domain: "allowed.test", headers: { Authorization: "Bearer ${e2b.secrets.mirror-key}" } },
    ]);
    expect(created.secretOutputs).toContain("network");
    const state = JSON.parse(readFileSync(opts.stateFile, "utf8")) as unknown;
    expect(plaintextOccurrences(state, KEY)).toBe(0);
    expect(plaintextOccurrences(state, PASSWORD)).toBe(0);
    expect(created.log).not.toContain(KEY);
    expect(created.log).not.toContain(PASSWORD);
  });
});
