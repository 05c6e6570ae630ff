/**
 * Dependents follow their template through the Pulumi engine harness: a
 * changed build step rebuilds the Template, and the same preview shows the
 * Provisioner on its `ref` and the Snapshot of its `keptSandboxRef` replaced;
 * after `up`, sandboxes from both snapshots hold the new build's file. A
 * tags-only change keeps the build and replaces nothing. A dependent given the
 * plain ID (`templateID`, `keptSandboxID`) is warned about, also when the value
 * went through `.apply` or `pulumi.interpolate`.
 */
import { preview, up } from "../harness";
import { ops, pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";
import { fileInTemplate } from "../support/template-files";

jest.setTimeout(600_000);

const stack = pulumiStack("dependents", { destroyAfter: true });

describe("dependents follow their template through Pulumi", () => {
  const phase = phases();
  const opts = (config: Record<string, unknown>) => stackOptions(stack.svc, stack.dir, config);

  phase("creates the template, the Provisioner on its ref and the snapshot", async () => {
    const created = await up(stack.dir, opts({ word: "one" }));
    expect(ops(created).sort()).toEqual(["create agent", "create kept", "create setup"]);
    expect(created.outputs["ref"]).toMatch(/^[a-z0-9]+@[0-9a-f-]+$/);
    expect(created.log).not.toContain("stays the same across");
    expect(await fileInTemplate(stack.svc, "pl-dep-ready", "/home/user/seen.txt")).toBe("one\n");
  });

  phase("replaces nothing downstream when only the template's tags change", async () => {
    const retagged = await up(stack.dir, opts({ word: "one", tag: "v2" }));
    expect(ops(retagged).sort()).toEqual(["same kept", "same setup", "update agent"]);
  });

  phase(
    "warns when a dependent takes the plain ID's value through .apply or interpolate",
    async () => {
      // The template is unchanged, so its ID is known at preview: the check by value runs.
      const viaApply = await preview(
        stack.dir,
        opts({ word: "one", tag: "v2", wiring: "apply-template" }),
      );
      expect(viaApply.log.replace(/\s+/g, " ")).toContain(
        'template takes the templateID of Template "agent", which stays the same across builds',
      );
      const viaInterpolate = await preview(
        stack.dir,
        opts({ word: "one", tag: "v2", wiring: "apply-sandbox" }),
      );
      const text = viaInterpolate.log.replace(/\s+/g, " ");
      expect(text).toContain(
        'sandboxID takes the keptSandboxID of Provisioner "setup", which stays the same across runs',
      );
      expect(text).not.toContain("template takes");
    },
  );

  phase(
    "previews the Provisioner and the snapshot replaced when a build step changes",
    async () => {
      const planned = await preview(stack.dir, opts({ word: "two", tag: "v2" }));
      expect(ops(planned)).toEqual(
        expect.arrayContaining(["update agent", "replace setup", "replace kept"]),
      );
    },
  );

  phase("warns when a dependent takes the plain ID, naming the reference to give", async () => {
    const planned = await preview(stack.dir, opts({ word: "two", tag: "v2", wiring: "plain" }));
    const text = planned.log.replace(/\s+/g, " ");
    expect(text).toContain(
      'template takes the templateID of Template "agent", which stays the same across builds: a new build of the Template will not run this Provisioner again; give its ref (template: <the Template>.ref) instead',
    );
    expect(text).toContain(
      'sandboxID takes the keptSandboxID of Provisioner "setup", which stays the same across runs: a new run of the Provisioner will not retake this Snapshot; give its keptSandboxRef (sandboxID: <the Provisioner>.keptSandboxRef) instead',
    );
  });

  phase("ups it: both snapshots hold the new build's file", async () => {
    const applied = await up(stack.dir, opts({ word: "two", tag: "v2" }));
    expect(ops(applied)).toEqual(
      expect.arrayContaining(["update agent", "replace setup", "replace kept"]),
    );
    expect(await fileInTemplate(stack.svc, "pl-dep-ready", "/home/user/seen.txt")).toBe("two\n");
    expect(await fileInTemplate(stack.svc, "pl-dep-kept", "/home/user/seen.txt")).toBe("two\n");
    const again = await up(stack.dir, opts({ word: "two", tag: "v2" }));
    expect(ops(again).sort()).toEqual(["same agent", "same kept", "same setup"]);
  });
});
