/**
 * A CDK program in TypeScript whose Provisioner may reach only its package
 * mirror, with a `Secret` injected by a `network.rules` entry and an
 * `egressProxy` whose password comes from a sensitive variable: the shape
 * secret.md shows. generated.test.ts compiles this file as a user's program
 * would be compiled (strict), the synth tests synthesize it; the rules must
 * be writable as plain object literals, which a map of the generators' list
 * classes (E2B's own `Record<domain, Rule[]>` shape) did not allow.
 */
import type { Construct } from "constructs";
import type { CdkFlavour } from "./synth-stacks";

/** The mirror the setup step may reach, and the secret's name the rule fills in. */
export const MIRROR = { domain: "pypi.internal.example", secretName: "mirror-key" };

/** Adds the mirror's Secret and the Provisioner that uses it to `scope`. */
export function egressStack(scope: Construct, { lib, bindings }: CdkFlavour): void {
  const mirrorKey = new lib.TerraformVariable(scope, "mirror_key", {
    type: "string",
    sensitive: true,
  });
  const proxyPassword = new lib.TerraformVariable(scope, "proxy_password", {
    type: "string",
    sensitive: true,
  });
  const mirror = new bindings.Secret(scope, "mirror", {
    name: MIRROR.secretName,
    value: mirrorKey.stringValue,
  });
  new bindings.Provisioner(scope, "setup", {
    template: "base",
    commands: [{ run: `pip install --index-url https://${MIRROR.domain}/simple mypkg` }],
    network: {
      allowOut: [MIRROR.domain],
      denyOut: ["0.0.0.0/0"],
      rules: [
        {
          domain: MIRROR.domain,
          // `$${` is Terraform's escape: the provider receives `${e2b.secrets.mirror-key}`.
          headers: { Authorization: `Bearer $\${e2b.secrets.${MIRROR.secretName}}` },
        },
      ],
      egressProxy: {
        address: "proxy.example.com:1080",
        username: "ci",
        password: proxyPassword.stringValue,
      },
    },
    dependsOn: [mirror],
  });
}
