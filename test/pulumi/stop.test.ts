/**
 * Stop means stop through the real dynamic-provider plugin: when the engine
 * closes the plugin mid-operation (a second Ctrl-C: SIGINT to the plugin's
 * process group), the template build in flight is cancelled on the service
 * and the state keeps the build it had. The engine's `Cancel` RPC (the first
 * Ctrl-C) reaches a no-op in Pulumi's Node plugin: see src/pulumi/plugin-stop.ts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { HarnessRunError, up } from "../harness";
import { pulumiStack, stackOptions } from "./support";
import { phases } from "../support/phases";
import { eventually } from "../support/eventually";

jest.setTimeout(600_000);

const stack = pulumiStack("template", {
  prepare: (root) => {
    mkdirSync(path.join(root, "files"), { recursive: true });
    writeFileSync(path.join(root, "files", "hello.txt"), "hello\n");
  },
  destroyAfter: true,
});

interface Build {
  buildID: string;
  status: string;
}

describe("Template through Pulumi: the engine closing the plugin stops the build", () => {
  const phase = phases();
  const opts = (config: Record<string, unknown>) => stackOptions(stack.svc, stack.dir, config);
  let templateID: string;
  let firstBuildID: string;

  async function builds(): Promise<Build[]> {
    return ((await stack.svc.call("GET", `/templates/${templateID}`)).body as { builds: Build[] })
      .builds;
  }

  phase("builds the template once", async () => {
    const created = await up(stack.dir, opts({ name: "pulumi-stop" }));
    templateID = created.outputs["templateID"] as string;
    firstBuildID = created.outputs["buildID"] as string;
  });

  phase("cancels the rebuild on the service when the plugin is closed mid-build", async () => {
    // GIVEN a rebuild whose step takes long
    const interrupt = new AbortController();
    const rebuilding = up(stack.dir, {
      ...opts({ name: "pulumi-stop", run: "sleep 120" }),
      interrupt: interrupt.signal,
    }).catch((err: unknown) => err);
    // WHEN the engine closes the plugin while the service is building it
    const rebuild = await eventually(
      async () =>
        (await builds()).find((b) => b.buildID !== firstBuildID && b.status === "building") ??
        false,
      { timeoutMs: 180_000 },
    );
    interrupt.abort();
    const failed = await rebuilding;
    // THEN the update fails, the build is cancelled on the service, the state keeps the first build
    expect(failed).toBeInstanceOf(HarnessRunError);
    const { result } = failed as HarnessRunError;
    expect(result.log).toContain(`cancel build ${rebuild.buildID}`);
    // The service goes on stopping the build's sandbox after the plugin has exited.
    const status = await eventually(
      async () => {
        const res = await stack.svc.call(
          "GET",
          `/templates/${templateID}/builds/${rebuild.buildID}/status`,
        );
        const body = res.body as { status: string; reason?: { message: string } };
        return body.status === "building" ? false : body;
      },
      { timeoutMs: 120_000 },
    );
    expect(status.status).toBe("error");
    expect(status.reason?.message).toContain("the build was cancelled: the client cancelled it");
    const tpl = result.state.resources.find((r) => r.urn.endsWith("::tpl"));
    expect(tpl?.outputs["buildID"]).toBe(firstBuildID);
  });
});
