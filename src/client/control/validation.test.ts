import { resolveConfig } from "../../config";
import { SandboxIacError } from "../../errors";
import { createControlClient, type ControlClient } from "./client";

/** A client whose fetch records calls; every test asserts it was never called. */
function guarded(): { api: ControlClient; fetch: jest.Mock } {
  const fetch = jest.fn(async () => new Response(null, { status: 500 }));
  const api = createControlClient({
    config: resolveConfig({ apiUrl: "http://127.0.0.1:9", env: {} }),
    fetch,
    log: () => undefined,
  });
  return { api, fetch };
}

async function invalid(run: (api: ControlClient) => Promise<unknown>): Promise<SandboxIacError> {
  const { api, fetch } = guarded();
  let caught: unknown;
  try {
    await run(api);
  } catch (error) {
    caught = error;
  }
  expect(fetch).not.toHaveBeenCalled();
  if (!SandboxIacError.hasCode(caught, "invalid_argument"))
    throw new Error(`expected invalid_argument, got ${String(caught)}`);
  return caught;
}

describe("control client argument validation", () => {
  it("fails when cpuCount is 0, naming the field, the value and >= 1, before any request", async () => {
    const err = await invalid((api) => api.createTemplateV3({ name: "t", cpuCount: 0 }));
    expect(err.field).toBe("cpuCount");
    expect(err.operation).toBe("templates.createV3");
    expect(err.message).toContain("cpuCount must be >= 1, got 0");
  });

  it("fails when memoryMB is below 128", async () => {
    const err = await invalid((api) => api.createTemplateV3({ memoryMB: 64 }));
    expect(err.message).toContain("memoryMB must be >= 128, got 64");
  });

  it("fails when the page limit is 101", async () => {
    const err = await invalid((api) => api.listSandboxesV2Page({ limit: 101 }));
    expect(err.message).toContain("limit must be <= 100, got 101");
  });

  it("fails when a sandbox ID is empty", async () => {
    const err = await invalid((api) => api.getSandbox(""));
    expect(err.field).toBe("sandboxID");
    expect(err.message).toContain("must be a sandbox ID like");
  });

  it("fails when a metrics start is negative", async () => {
    const err = await invalid((api) => api.getSandboxMetrics("iabc", { start: -1 }));
    expect(err.message).toContain("start must be >= 0, got -1");
  });

  it("fails when the metrics interval ends before it starts", async () => {
    const err = await invalid((api) => api.getSandboxMetrics("iabc", { start: 10, end: 5 }));
    expect(err.field).toBe("end");
  });

  it("fails when a sandbox create asks for a zero timeout", async () => {
    const err = await invalid((api) => api.createSandboxV2({ templateID: "base", timeout: 0 }));
    expect(err.message).toContain("timeout must be >= 1, got 0");
  });

  it("fails when the batch metrics repeat a sandbox ID", async () => {
    const err = await invalid((api) => api.getSandboxesMetrics(["ia", "ia"]));
    expect(err.field).toBe("sandboxIDs");
  });

  it("fails when the batch metrics ask for more than 100 sandboxes", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `i${i}`);
    const err = await invalid((api) => api.getSandboxesMetrics(ids));
    expect(err.message).toContain("at most 100 items");
  });

  it("fails when a files hash is not sha256 hex", async () => {
    const err = await invalid((api) => api.getTemplateFilesUploadLink("tpl", "abc"));
    expect(err.field).toBe("hash");
  });

  it("fails when a refresh lasts longer than an hour", async () => {
    const err = await invalid((api) => api.refreshSandbox("iabc", 3601));
    expect(err.message).toContain("duration must be <= 3600, got 3601");
  });

  it("fails when a network update's egressProxy has no address, without showing its password", async () => {
    const password = "pw-never-shown-0123";
    const err = await invalid((api) =>
      // @ts-expect-error: no address on purpose
      api.updateSandboxNetwork("iabc", { egressProxy: { username: "u", password } }),
    );
    expect(err.field).toBe("egressProxy.address");
    expect(err.operation).toBe("sandboxes.updateNetwork");
    expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(password);
  });

  it("fails when a state filter is unknown", async () => {
    // @ts-expect-error: an invalid state on purpose
    const err = await invalid((api) => api.listSandboxesV2Page({ state: ["stopped"] }));
    expect(err.field).toBe("state.0");
    expect(err.message).toContain('one of "running", "paused"');
  });

  it("fails when tags to assign are empty", async () => {
    const err = await invalid((api) => api.assignTemplateTags({ target: "t:default", tags: [] }));
    expect(err.message).toContain("at least 1 item");
  });

  it("fails when the iterator is given a bad limit, before the first page", async () => {
    await invalid(async (api) => {
      for await (const _ of api.listSandboxesV2({ limit: 0 })) {
        // unreachable
      }
    });
  });
});

describe("control client arguments set to undefined", () => {
  it("sends them as if they were left out", async () => {
    const seen: Request[] = [];
    const api = createControlClient({
      config: resolveConfig({ apiUrl: "http://127.0.0.1:9", env: {} }),
      fetch: async (input: string | URL | Request) => {
        seen.push(input as Request);
        return new Response("[]", { status: 200, headers: { "Content-Type": "application/json" } });
      },
      log: () => undefined,
    });
    await api.listSnapshotsPage({ sandboxID: undefined, name: "snap", limit: undefined });
    expect(new URL(seen[0].url).search).toBe("?name=snap");
    await api.createSecret("token", "s3cret", undefined).catch(() => undefined);
    expect(await seen[1].json()).toEqual({ name: "token", value: "s3cret" });
  });
});
