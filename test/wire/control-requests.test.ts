/**
 * The control API's request bodies are written once (src/wire/control-requests.ts):
 * the client's argument check and the service's body parsing accept and
 * refuse the same bodies, except where the service is deliberately more
 * lenient (null for an absent field; a timeout out of range reaches the
 * handler, which answers with E2B's message).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ZodType } from "zod";
import * as client from "../../src/client/control/args";
import { networkUpdateSchema } from "../../src/local/control/sandboxes/network";
import * as sandboxes from "../../src/local/control/sandboxes/schemas";
import * as templates from "../../src/local/control/templates/schemas";

const accepts = (schema: ZodType, body: unknown): boolean => schema.safeParse(body).success;

// [name, client schema, service schema, body, client accepts, service accepts]
const cases: [string, ZodType, ZodType, unknown, boolean, boolean][] = [
  [
    "a create",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base" },
    true,
    true,
  ],
  [
    "a create with every field",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    {
      templateID: "base",
      timeout: 300,
      secure: true,
      allow_internet_access: false,
      autoPause: true,
      autoResume: { enabled: true },
      metadata: { a: "b" },
      envVars: { A: "1" },
      network: { allowOut: ["1.1.1.1"] },
      volumeMounts: [{ name: "v", path: "/mnt/v" }],
    },
    true,
    true,
  ],
  [
    "a create without templateID",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    {},
    false,
    false,
  ],
  [
    "a create with string metadata values only",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base", metadata: { a: 1 } },
    false,
    false,
  ],
  [
    "a fractional create timeout",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base", timeout: 1.5 },
    false,
    false,
  ],
  [
    "a create timeout above int32",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base", timeout: 2 ** 40 },
    false,
    false,
  ],
  // The service lets a zero timeout through to the handler, which answers
  // E2B's "Timeout must be greater than 0".
  [
    "a zero create timeout",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base", timeout: 0 },
    false,
    true,
  ],
  ["a zero resume timeout", client.ResumeArgs, sandboxes.resumeSchema, { timeout: 0 }, false, true],
  [
    "a resume",
    client.ResumeArgs,
    sandboxes.resumeSchema,
    { timeout: 60, memory: true },
    true,
    true,
  ],
  [
    "a resume with a string timeout",
    client.ResumeArgs,
    sandboxes.resumeSchema,
    { timeout: "60" },
    false,
    false,
  ],
  // The SDKs send null for an absent field.
  [
    "a create with null metadata",
    client.NewSandboxArgs,
    sandboxes.newSandboxSchema,
    { templateID: "base", metadata: null },
    false,
    true,
  ],
  ["a v1 connect", client.ConnectArgs, sandboxes.connectSchema, { timeout: 0 }, true, true],
  ["a v1 connect without timeout", client.ConnectArgs, sandboxes.connectSchema, {}, false, false],
  [
    "a negative connect timeout",
    client.ConnectArgs,
    sandboxes.connectSchema,
    { timeout: -1 },
    false,
    false,
  ],
  ["a v2 connect without timeout", client.ConnectV2Args, sandboxes.connectV2Schema, {}, true, true],
  ["a pause", client.PauseArgs, sandboxes.pauseSchema, { memory: false }, true, true],
  ["a set-timeout", client.TimeoutArgs, sandboxes.timeoutSchema, { timeout: 30 }, true, true],
  // A negative set-timeout counts as 0 on the service.
  [
    "a negative set-timeout",
    client.TimeoutArgs,
    sandboxes.timeoutSchema,
    { timeout: -5 },
    false,
    true,
  ],
  ["a refresh", client.RefreshArgs, sandboxes.refreshSchema, { duration: 60 }, true, true],
  [
    "a refresh above an hour",
    client.RefreshArgs,
    sandboxes.refreshSchema,
    { duration: 3601 },
    false,
    false,
  ],
  [
    "a network update with a SOCKS5 proxy",
    client.NetworkUpdateArgs,
    networkUpdateSchema,
    {
      allowOut: ["api.example.com"],
      denyOut: ["0.0.0.0/0"],
      rules: { "api.example.com": [{ transform: { headers: { "X-Key": "v" } } }] },
      egressProxy: { address: "proxy.example.com:1080", username: "u", password: "p" },
    },
    true,
    true,
  ],
  [
    "a network update without the proxy's address",
    client.NetworkUpdateArgs,
    networkUpdateSchema,
    { egressProxy: { username: "u" } },
    false,
    false,
  ],
  [
    "a network update whose allowOut is not a list",
    client.NetworkUpdateArgs,
    networkUpdateSchema,
    { allowOut: "api.example.com" },
    false,
    false,
  ],
  // The service checks each entry; the client leaves E2B's rules to it.
  [
    "a network update with a domain in denyOut",
    client.NetworkUpdateArgs,
    networkUpdateSchema,
    { denyOut: ["example.com"] },
    true,
    false,
  ],
  [
    "a template request",
    client.TemplateV3Args,
    templates.BuildRequestV3,
    { name: "t", cpuCount: 2 },
    true,
    true,
  ],
  [
    "a template name over 128 characters",
    client.TemplateV3Args,
    templates.BuildRequestV3,
    { name: "n".repeat(129) },
    false,
    false,
  ],
  [
    "too little memory",
    client.TemplateV3Args,
    templates.BuildRequestV3,
    { name: "t", memoryMB: 64 },
    false,
    false,
  ],
  [
    "a build start",
    client.BuildStartArgs,
    templates.BuildStartV2,
    { fromTemplate: "base", steps: [{ type: "RUN", args: ["true"], force: false }] },
    true,
    true,
  ],
  [
    "a step without type",
    client.BuildStartArgs,
    templates.BuildStartV2,
    { fromTemplate: "base", steps: [{ args: [] }] },
    false,
    false,
  ],
  [
    "a tag assignment",
    client.AssignTagsArgs,
    templates.AssignTags,
    { target: "t:default", tags: ["v1"] },
    true,
    true,
  ],
  [
    "a tag assignment without tags",
    client.AssignTagsArgs,
    templates.AssignTags,
    { target: "t", tags: [] },
    false,
    false,
  ],
  [
    "a tag deletion",
    client.DeleteTagsArgs,
    templates.DeleteTags,
    { name: "t", tags: ["v1"] },
    true,
    true,
  ],
  [
    "a snapshot request",
    client.SnapshotArgs,
    templates.SnapshotRequest,
    { name: "snap" },
    true,
    true,
  ],
  [
    "a template update",
    client.TemplateUpdateArgs,
    templates.TemplateUpdate,
    { public: true },
    true,
    true,
  ],
  [
    "a template update of the wrong type",
    client.TemplateUpdateArgs,
    templates.TemplateUpdate,
    { public: "yes" },
    false,
    false,
  ],
];

describe("control API request bodies", () => {
  it.each(cases)(
    "%s: the client accepts it: %#, as the table says",
    (_name, clientSchema, serviceSchema, body, clientAccepts, serviceAccepts) => {
      expect([accepts(clientSchema, body), accepts(serviceSchema, body)]).toEqual([
        clientAccepts,
        serviceAccepts,
      ]);
    },
  );

  it("keeps fields it does not know on the client and drops them on the service", () => {
    const body = { templateID: "base", futureField: 1 };
    expect(client.NewSandboxArgs.parse(body)).toEqual(body);
    expect(sandboxes.newSandboxSchema.parse(body)).toEqual({ templateID: "base" });
  });
});

describe("one definition of each request body", () => {
  const SRC = path.resolve(__dirname, "..", "..", "src");
  const holders = (needle: RegExp): string[] => {
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== "gen") walk(p);
        } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) {
          if (needle.test(fs.readFileSync(p, "utf8"))) found.push(path.relative(SRC, p));
        }
      }
    };
    walk(SRC);
    return found.sort();
  };

  it("lists the log levels once", () => {
    expect(holders(/\[\s*"debug",\s*"info",\s*"warn",\s*"error",?\s*\]/)).toEqual([
      path.join("wire", "control-requests.ts"),
    ]);
  });

  it("declares no request body by hand outside src/wire (the client and service derive theirs)", () => {
    const names = [
      ...["NewSandbox", "NewSandboxV2", "Connect", "ConnectV2", "Resume", "Pause", "Timeout"],
      ...["Refresh", "Snapshot", "TemplateV3", "TemplateUpdate", "BuildStart", "AssignTags"],
      "DeleteTags",
      "NetworkUpdate",
    ].map((n) => `${n}Args`);
    const service = ["newSandboxSchema", "resumeSchema", "connectSchema", "connectV2Schema"]
      .concat(["pauseSchema", "timeoutSchema", "refreshSchema", "BuildRequestV3"])
      .concat(["TemplateStepSchema", "BuildStartV2", "TemplateUpdate", "AssignTags", "DeleteTags"])
      .concat(["SnapshotRequest", "networkUpdateSchema"]);
    const handWritten = new RegExp(`export const (${[...names, ...service].join("|")}) = z\\.`);
    expect(holders(handWritten)).toEqual([]);
    for (const name of names) expect(client).toHaveProperty(name);
  });
});
