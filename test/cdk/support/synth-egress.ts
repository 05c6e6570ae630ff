/**
 * The synth tests of a Provisioner's `network` with `rules` and `egressProxy`
 * (the program in egress-stack.ts), registered by synth-suite.ts inside its
 * describe block.
 */
import { egressStack, MIRROR } from "./egress-stack";
import {
  SECRET,
  stackWithProvider,
  synthJson,
  validationError,
  type CdkFlavour,
} from "./synth-stacks";

/** Registers the egress synth tests for `flavour` in the describe block being built. */
export function synthEgressTests(flavour: CdkFlavour): void {
  const { bindings } = flavour;

  it("synthesizes network.rules as the provider's list of per-domain entries, the secret and the password as references", () => {
    const stack = stackWithProvider(flavour);
    egressStack(stack, flavour);
    const json = synthJson(flavour, stack);
    expect(json.resource.sandboxiac_provisioner.setup.network).toEqual({
      allow_out: [MIRROR.domain],
      deny_out: ["0.0.0.0/0"],
      rules: [
        {
          domain: MIRROR.domain,
          headers: { Authorization: `Bearer $\${e2b.secrets.${MIRROR.secretName}}` },
        },
      ],
      egress_proxy: {
        address: "proxy.example.com:1080",
        username: "ci",
        password: "${var.proxy_password}",
      },
    });
    expect(json.resource.sandboxiac_secret.mirror.value).toBe("${var.mirror_key}");
    expect(json.variable.proxy_password.sensitive).toBe(true);
    expect(json.resource.sandboxiac_provisioner.setup.depends_on).toEqual([
      "sandboxiac_secret.mirror",
    ]);
  });

  it("fails synth validation on a domain given twice or a bad header name, in the construct's names", () => {
    const stack = stackWithProvider(flavour);
    new bindings.Provisioner(stack, "setup", {
      template: "base",
      network: {
        allowOut: [MIRROR.domain],
        rules: [
          { domain: MIRROR.domain, headers: { Authorization: "Bearer $${e2b.secrets.a}" } },
          { domain: MIRROR.domain.toUpperCase(), headers: { "X Key": "1" } },
        ],
      },
    });
    const message = validationError(flavour, stack);
    expect(message).toContain(
      `sandboxiac_provisioner.setup: network.rules[1].domain repeats the domain of rules[0] ("${MIRROR.domain}"`,
    );
    expect(message).toContain(
      'sandboxiac_provisioner.setup: network.rules[1].headers["X Key"] header name "X Key" is not an HTTP token',
    );
  });

  it("refuses a literal proxy password at synth, without repeating it", () => {
    const stack = stackWithProvider(flavour);
    new bindings.Provisioner(stack, "setup", {
      template: "base",
      network: {
        egressProxy: { address: "proxy.example.com:1080", username: "ci", password: SECRET },
      },
    });
    const message = validationError(flavour, stack);
    expect(message).toContain(
      "sandboxiac_provisioner.setup: network.egressProxy.password is a literal, which would be written in clear into cdk.tf.json",
    );
    expect(message).not.toContain(SECRET);
  });
}
