/**
 * One template-name grammar (src/wire/template-names.ts) seen the same way by
 * the resources' check (Template, Snapshot, the template data source) and the
 * local service (`POST /v3/templates`, `POST /templates/tags`).
 */
import * as path from "node:path";
import { sourcesHolding } from "./support";
import { checkWithSchema } from "../../src/resources/core/check";
import { dataSourceDescriptor, resourceDescriptor } from "../../src/resources/registry";
import { call } from "../local/support";
import { useService, type TestService } from "../support/service";

const valid = ["tools", "team/tools", "team/tools:v1.2", "a-b_c", " My-Tools ", "n".repeat(128)];
const invalid: [string, RegExp][] = [
  ["", /Name is required/],
  ["   ", /Name is required/],
  ["a b", /alias must match/],
  ["a/b/c", /alias must match/],
  ["ns!/x", /namespace must match/],
  ["a:b:c", /tag must match/],
  ["a:", /tag must match/],
  ["x:123e4567-e89b-12d3-a456-426614174000", /tag must not be a UUID/],
  ["n".repeat(129), /at most 128 characters/],
];

/** The `name` failures of every resource or data source that takes a template name. */
function nameFailures(name: string): string[] {
  const template = resourceDescriptor("Template").lifecycle.check({
    name,
    build: { fromImage: "ubuntu:22.04" },
  });
  const snapshot = resourceDescriptor("Snapshot").lifecycle.check({
    sandboxID: "i0123456789abcdefghij",
    name,
  });
  const data = checkWithSchema(dataSourceDescriptor("template").args, { name });
  return [template, snapshot, data].flatMap((r) =>
    r.failures.filter((f) => f.property === "name").map((f) => f.reason),
  );
}

describe("the template-name grammar in the resources", () => {
  it.each(valid)("accepts %j in Template, Snapshot and the template data source", (name) => {
    expect(nameFailures(name)).toEqual([]);
  });

  it.each(invalid)("refuses %j in all three, naming the rule", (name, rule) => {
    const failures = nameFailures(name);
    expect(failures).toHaveLength(3);
    for (const reason of failures) expect(reason).toMatch(rule);
  });

  it("refuses a bad tag in Template's tags, naming the rule", () => {
    const result = resourceDescriptor("Template").lifecycle.check({
      name: "t",
      tags: ["ok", "no/slash"],
      build: { fromImage: "ubuntu:22.04" },
    });
    expect(result.failures.map((f) => `${f.property} ${f.reason}`)).toEqual([
      expect.stringMatching(/^tags\.1 tag must match/),
    ]);
  });
});

describe("the template-name grammar on the local service", () => {
  let svc: TestService;
  useService((s) => (svc = s));

  it.each(valid)("registers %j (202)", async (name) => {
    const answer = await call(svc, "POST", "/v3/templates", { name });
    expect(answer.status).toBe(202);
  });

  it.each(invalid.filter(([name]) => name.length <= 128))(
    "answers 400 for %j with the same rule as the resources",
    async (name, rule) => {
      const answer = await call(svc, "POST", "/v3/templates", { name });
      expect(answer.status).toBe(400);
      expect((answer.body as { message: string }).message).toMatch(rule);
    },
  );

  it("answers 400 for a name over 128 characters", async () => {
    const answer = await call(svc, "POST", "/v3/templates", { name: "n".repeat(129) });
    expect(answer.status).toBe(400);
    expect((answer.body as { message: string }).message).toMatch(/body\.name/);
  });
});

describe("one definition of the template-name grammar", () => {
  it("writes the name and tag patterns, the default tag and the length only in src/wire", () => {
    const literals = [
      "[a-z0-9-_]+$/",
      "[a-z0-9-_.]+$/",
      "DEFAULT_TAG = ",
      "MAX_TEMPLATE_NAME_LENGTH = ",
      "function parseTemplateName(",
      "function nameProblem(",
    ];
    const holders = sourcesHolding(literals);
    expect(holders).toEqual([path.join("wire", "template-names.ts")]);
  });
});
