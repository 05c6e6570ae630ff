/**
 * Inputs the descriptors mark sensitive (a Secret's `value`, a Provisioner's
 * `envs`) given as plain strings, never wrapped in `pulumi.secret()`, through
 * Pulumi (test/harness) against the local service: the state keeps them as
 * secrets, so the checkpoint the CLI writes holds them only encrypted.
 */
import { createHash } from "node:crypto";
import { checkpointText, destroy, isSecret, readState, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";

jest.setTimeout(600_000);

const SECRET_VALUE = "plain-secret-value-5b0e-given-unwrapped";
const ENV_VALUE = "plain-env-value-a4c2-given-unwrapped";

const stack = pulumiStack("plain-secrets", { destroyAfter: true });

describe("sensitive inputs given as plain strings through Pulumi", () => {
  const phase = phases();
  const opts = () =>
    stackOptions(stack.svc, stack.dir, {
      secretValue: SECRET_VALUE,
      envValue: ENV_VALUE,
      envDigest: createHash("sha256").update(ENV_VALUE).digest("hex"),
    });

  phase("stores a Secret's value and a Provisioner's envs as secrets, never in clear", async () => {
    const created = await up(stack.dir, opts());
    expect(ops(created).sort()).toEqual(["create plain-env", "create plain-sec"]);
    // The sandbox got the plain value (its command compared the digest).
    expect(created.outputs["commandsRun"]).toBe(1);

    const state = readState(opts().stateFile);
    const text = checkpointText(state);
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(ENV_VALUE);
    // Kept as secrets, not dropped: inputs and outputs both.
    const byName = (name: string) => state.resources.find((r) => r.urn.endsWith(`::${name}`))!;
    const secret = byName("plain-sec");
    const provisioner = byName("plain-env");
    expect(isSecret(secret.inputs["value"])).toBe(true);
    expect(isSecret(secret.outputs["value"])).toBe(true);
    expect(isSecret(provisioner.inputs["envs"])).toBe(true);
    expect(isSecret(provisioner.outputs["envs"])).toBe(true);
  });

  phase("sees no change on the next up (the secret wrapping is stable)", async () => {
    expect(ops(await up(stack.dir, opts())).sort()).toEqual(["same plain-env", "same plain-sec"]);
  });

  phase("destroys both", async () => {
    expect((await destroy(stack.dir, opts())).state.resources).toEqual([]);
    expect((await stack.svc.call("GET", "/secrets")).body).toEqual([]);
  });
});
