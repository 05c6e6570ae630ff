/**
 * A Provisioner's sandbox network (`network` with `allow_out`, `deny_out`,
 * `allow_public_traffic`), with the real terraform binary: a domain in
 * `deny_out` fails the plan before anything exists, as the service would
 * refuse it; the sandbox is created with the declared rules (read back from
 * the service's `GET /sandboxes/{id}`); a change of the rules replaces the
 * Provisioner, which runs again in a sandbox with the new rules. What the
 * rules let through is tested against a stand-in internet in
 * test/isolation/egress-domains.test.ts.
 */
import { REQUIRED_PROVIDERS, terraformFixture, terraformSuite } from "./support";
import { phases } from "../support/phases";

const { version, describe: describeWithTerraform } = terraformSuite(
  "the Terraform Provisioner network tests are",
);

jest.setTimeout(300_000);

const hcl = (network: string) => `${REQUIRED_PROVIDERS}
resource "sandboxiac_provisioner" "p" {
  template     = "base"
  commands     = [{ run = "echo provisioned > /home/user/done.txt" }]
  keep_sandbox = true
  network      = ${network}
}
`;

interface Detail {
  network?: { allowOut?: string[]; denyOut?: string[]; allowPublicTraffic?: boolean };
}

describeWithTerraform(`a Provisioner's sandbox network (${version ?? "no terraform"})`, () => {
  const tf = terraformFixture({
    beforeClose: async () => {
      await ws?.tf("destroy", "-auto-approve", "-input=false");
    },
  });
  const phase = phases();
  let ws: ReturnType<typeof tf.workspace> | undefined;
  let first = "";

  async function sandboxIDs(): Promise<string[]> {
    const res = await tf.svc.call("GET", "/sandboxes");
    return (res.body as Array<{ sandboxID: string }>).map((s) => s.sandboxID);
  }
  const detail = async (id: string) =>
    (await tf.svc.call("GET", `/sandboxes/${id}`)).body as Detail;

  phase(
    "fails the plan on a domain in deny_out, as the service would, before anything exists",
    async () => {
      ws = tf.workspace(hcl(`{ deny_out = ["0.0.0.0/0", "pypi.org"] }`));
      await ws.init();
      const plan = await ws.tf("plan", "-input=false", "-no-color");
      expect(plan.code).toBe(1);
      const text = plan.output.replace(/\s+/g, " ");
      expect(text).toContain("network.deny_out[1] must be an IPv4 address or CIDR block");
      expect(text).toContain(
        'domain names are not supported in deny_out (as in E2B); deny everything with "0.0.0.0/0" and list the domains in allow_out, got "pypi.org"',
      );
      expect(text).not.toContain("denyOut");
      expect(await sandboxIDs()).toEqual([]);
    },
  );

  phase("creates the sandbox with the declared rules and runs the commands in it", async () => {
    ws!.write(
      hcl(
        `{ deny_out = ["0.0.0.0/0"], allow_out = ["198.51.100.0/24", "*.PyPI.org"], allow_public_traffic = false }`,
      ),
    );
    const applied = await ws!.tf("apply", "-auto-approve", "-input=false");
    expect(applied.code).toBe(0);
    const p = ws!.resource("sandboxiac_provisioner.p")!;
    expect(p.commands_run).toBe(1);
    first = p.kept_sandbox_id as string;
    const d = await detail(first);
    expect(d.network).toEqual({
      denyOut: ["0.0.0.0/0"],
      allowOut: ["198.51.100.0/24", "*.pypi.org"],
      allowPublicTraffic: false,
    });
  });

  phase(
    "replaces the Provisioner when the rules change, in a sandbox with the new rules",
    async () => {
      ws!.write(hcl(`{ deny_out = ["0.0.0.0/0"], allow_out = ["203.0.113.7"] }`));
      const plan = await ws!.tf("plan", "-input=false", "-no-color");
      expect(plan.code).toBe(0);
      expect(plan.output).toMatch(/network\s+=.*# forces replacement/s);
      const applied = await ws!.tf("apply", "-auto-approve", "-input=false");
      expect(applied.code).toBe(0);
      const second = ws!.resource("sandboxiac_provisioner.p")!.kept_sandbox_id as string;
      expect(second).not.toBe(first);
      expect(await sandboxIDs()).toEqual([second]);
      expect((await detail(second)).network).toEqual({
        denyOut: ["0.0.0.0/0"],
        allowOut: ["203.0.113.7"],
      });
    },
  );
});
