/**
 * One sandbox-ID grammar (src/wire/ids.ts) seen the same way by every part:
 * envd-facing code (config, the sandbox client) takes `[a-z0-9]+`; control-API
 * facing code (the control client, the resources' check, the service's paths)
 * also takes the legacy `<sandboxID>-<clientID>`, and refuses anything else.
 */
import * as path from "node:path";
import { sourcesHolding } from "./support";
import { createControlClient } from "../../src/client/control";
import { createSandboxClient } from "../../src/client/sandbox/client";
import { resolveConfig } from "../../src/config";
import { SandboxIacError } from "../../src/errors";
import {
  isBuildID,
  NEW_SANDBOX_ID_PATTERN,
  newBuildID,
  newSandboxID,
  newTemplateID,
  SANDBOX_ID_PATTERN,
  TEMPLATE_ID_PATTERN,
} from "../../src/wire/ids";
import { dataSourceDescriptor, resourceDescriptor } from "../../src/resources/registry";
import { checkWithSchema } from "../../src/resources/core/check";
import { call } from "../local/support";
import { useService, type TestService } from "../support/service";

const canonical = ["i0123456789abcdefghij", "abc", "0"];
const legacy = ["abc-x", "i0123456789abcdefghij-6532622b"];
const invalid = ["ABC", "abc-x-y", "-abc", "abc-", "a_b", "a b", "", "abc.def"];

const config = resolveConfig({ apiUrl: "http://127.0.0.1:9", apiKey: "e2b_00" });

function envdRefusal(id: string): string | undefined {
  try {
    config.sandboxBaseUrl(id);
  } catch (err) {
    const fromConfig = err instanceof SandboxIacError ? err.message : String(err);
    try {
      createSandboxClient({ sandboxID: id, config });
    } catch (clientErr) {
      const fromClient = clientErr instanceof SandboxIacError ? clientErr.code : String(clientErr);
      return `${fromConfig} | ${fromClient}`;
    }
    return `config refused, client accepted: ${fromConfig}`;
  }
  createSandboxClient({ sandboxID: id, config });
  return undefined;
}

/** The failures of each resource or data source whose input is a sandbox ID. */
function checkFailures(sandboxID: string): string[] {
  const provisioner = resourceDescriptor("Provisioner").lifecycle.check({ sandboxID });
  const snapshot = resourceDescriptor("Snapshot").lifecycle.check({
    sandboxID,
    name: "snap",
  });
  const reads = ["sandbox", "sandboxMetrics", "snapshots"].map((type) =>
    checkWithSchema(dataSourceDescriptor(type).args, { sandboxID }),
  );
  return [provisioner, snapshot, ...reads].flatMap((r) =>
    r.failures.filter((f) => f.property === "sandboxID").map((f) => f.reason),
  );
}

describe("new IDs", () => {
  it("makes sandbox, template and build IDs of the documented shapes", () => {
    for (let i = 0; i < 50; i++) {
      const sandboxID = newSandboxID();
      expect(sandboxID).toMatch(NEW_SANDBOX_ID_PATTERN);
      expect(sandboxID).toMatch(SANDBOX_ID_PATTERN);
      expect(newTemplateID()).toMatch(TEMPLATE_ID_PATTERN);
      expect(isBuildID(newBuildID())).toBe(true);
    }
    expect(isBuildID("default")).toBe(false);
  });
});

describe("the sandbox ID grammar", () => {
  it.each(canonical)("accepts %j in config, sandbox client, control client and resources", (id) => {
    expect(envdRefusal(id)).toBeUndefined();
    expect(checkFailures(id)).toEqual([]);
  });

  it.each(legacy)(
    "refuses the legacy %j for envd, naming the ID to use, and accepts it on the control API",
    (id) => {
      const bare = id.split("-")[0];
      expect(envdRefusal(id)).toContain(`use "${bare}"`);
      expect(envdRefusal(id)).toContain("invalid_argument");
      expect(checkFailures(id)).toEqual([]);
    },
  );

  it.each(invalid)("refuses %j everywhere, saying what a sandbox ID is", (id) => {
    expect(envdRefusal(id)).toMatch(/sandboxID must be a sandbox ID of lower-case letters/);
    const failures = checkFailures(id);
    expect(failures).toHaveLength(5);
    for (const reason of failures) expect(reason).toMatch(/must be a sandbox ID like/);
  });

  it.each(invalid)("the control client refuses %j before sending anything", async (id) => {
    let sent = 0;
    const control = createControlClient({
      config,
      fetch: () => {
        sent++;
        return Promise.resolve(new Response("{}", { status: 500 }));
      },
    });
    await expect(control.getSandbox(id)).rejects.toMatchObject({
      code: "invalid_argument",
      field: "sandboxID",
    });
    expect(sent).toBe(0);
  });
});

describe("the sandbox ID grammar on the local service", () => {
  let svc: TestService;
  useService((s) => (svc = s));

  it.each([...canonical, ...legacy])(
    "looks %j up as a sandbox ID (404 for an unknown one)",
    async (id) => {
      const answer = await call(svc, "GET", `/sandboxes/${id}`);
      expect(answer.status).toBe(404);
    },
  );

  it.each(invalid.filter((id) => id !== "" && !id.includes(" ")))(
    "answers 400 Invalid sandbox ID for %j",
    async (id) => {
      const answer = await call(svc, "GET", `/sandboxes/${encodeURIComponent(id)}`);
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body)).toContain("Invalid sandbox ID");
    },
  );
});

describe("one definition of each ID rule", () => {
  it("writes the ID patterns and the volume and secret name grammar only in src/wire/ids.ts", () => {
    const literals = [
      "[a-z0-9]+$/",
      "[a-z0-9]+(-[a-z0-9]+)?$/",
      "[a-z0-9]{20}$/",
      "[0-9a-f]{8}-[0-9a-f]{4}",
      "[a-zA-Z0-9_-]",
      '"sec_"',
    ];
    const holders = sourcesHolding(literals);
    expect(holders).toEqual([path.join("wire", "ids.ts")]);
  });
});
