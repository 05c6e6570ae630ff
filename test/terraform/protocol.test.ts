/**
 * The provider over gRPC with no terraform: spawned like Terraform spawns it,
 * mutual TLS on the handshake's socket, then every RPC Terraform uses, against
 * the real local service.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { type Diagnostic, Diagnostic_Severity } from "../../src/gen/terraform/tfplugin6_pb";
import {
  UNKNOWN,
  decodeDynamic,
  encodeDynamic,
  type TfValue,
} from "../../src/terraform/values/dynamic-value";
import { eventually } from "../support/eventually";
import { assertBuilt, startTestService, type TestService } from "../pulumi/support";
import { PROVIDER_ENTRY, type ProviderProcess, startProvider } from "./provider-process";

type Obj = Record<string, TfValue>;

/** A Template config with every attribute present, as Terraform sends it. */
function templateConfig(name: string, tags: string[] | null = null): Obj {
  return {
    id: null,
    name,
    tags,
    cpu_count: null,
    memory_mb: null,
    min_free_disk_mb: null,
    build: {
      from_template: "base",
      from_image: null,
      from_image_registry: null,
      dockerfile: null,
      context: null,
      start_cmd: null,
      ready_cmd: null,
      skip_cache: null,
      steps: [
        {
          run: null,
          user: null,
          env: null,
          workdir: null,
          force: null,
          copy: { src: "files/app", sources: null, dest: "/opt/app", user: null, mode: null },
        },
      ],
    },
    template_id: null,
    build_id: null,
    names: null,
    public: null,
    envd_version: null,
    build_status: null,
    image_digest: null,
    files_hashes: null,
    current_tags: null,
  };
}

function errors(diagnostics: Diagnostic[]): string[] {
  return diagnostics
    .filter((d) => d.severity === Diagnostic_Severity.ERROR)
    .map((d) => `${d.summary}: ${d.detail}`);
}

function pathOf(d: Diagnostic): string {
  return (d.attribute?.steps ?? [])
    .map((s) =>
      s.selector.case === "elementKeyInt"
        ? `[${s.selector.value}]`
        : `.${String(s.selector.value)}`,
    )
    .join("")
    .replace(/^\./, "");
}

describe("terraform provider over gRPC (no terraform)", () => {
  let svc: TestService;
  let work: string;
  let p: ProviderProcess;

  beforeAll(async () => {
    assertBuilt();
    svc = await startTestService();
    work = mkdtempSync(path.join(tmpdir(), "tf-protocol-"));
    mkdirSync(path.join(work, "files", "app"), { recursive: true });
    writeFileSync(path.join(work, "files", "app", "hello.sh"), "echo hello\n");
    p = await startProvider(work);
  }, 120_000);

  afterAll(async () => {
    if (p) await p.shutdown();
    if (svc) await svc.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("refuses to run by hand, without Terraform's magic cookie", () => {
    const res = spawnSync(process.execPath, [PROVIDER_ENTRY], { encoding: "utf8", env: {} });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("started by Terraform, not by hand");
  });

  it("shakes hands with go-plugin's line and serves the certificate it announced", () => {
    expect(p.handshake.slice(0, 3)).toEqual(["1", "6", "unix"]);
    expect(p.handshake[4]).toBe("grpc");
    expect(p.handshake[5]).not.toMatch(/=$/);
    expect(p.peerCertificate.raw.toString("base64").replace(/=+$/, "")).toBe(p.handshake[5]);
    expect(p.peerCertificate.subjectAltName).toBe("DNS:localhost");
  });

  it("serves a schema with snake_case names, nested attributes and sensitive flags", async () => {
    const res = await p.provider.getProviderSchema({});
    expect(errors(res.diagnostics)).toEqual([]);
    // Terraform's later starts in one command then take its cached schema instead of asking again.
    expect(res.serverCapabilities?.getProviderSchemaOptional).toBe(true);
    expect(Object.keys(res.resourceSchemas).sort()).toEqual([
      "sandboxiac_provisioner",
      "sandboxiac_sandbox_reader",
      "sandboxiac_secret",
      "sandboxiac_snapshot",
      "sandboxiac_template",
      "sandboxiac_volume",
    ]);
    expect(Object.keys(res.dataSourceSchemas)).toEqual(
      expect.arrayContaining(["sandboxiac_sandbox", "sandboxiac_template", "sandboxiac_snapshots"]),
    );
    const template = res.resourceSchemas.sandboxiac_template.block!.attributes;
    const build = template.find((a) => a.name === "build")!;
    expect(build.nestedType?.attributes.map((a) => a.name)).toEqual(
      expect.arrayContaining(["from_template", "steps", "start_cmd"]),
    );
    expect(template.find((a) => a.name === "memory_mb")?.optional).toBe(true);
    const apiKey = res.provider!.block!.attributes.find((a) => a.name === "api_key")!;
    expect(apiKey.sensitive).toBe(true);
    const secret = res.resourceSchemas.sandboxiac_secret.block!.attributes;
    expect(secret.find((a) => a.name === "value")?.sensitive).toBe(true);
  });

  it("reports every invalid attribute with its path", async () => {
    const config = templateConfig("Bad Name!");
    config.cpu_count = 0;
    const res = await p.provider.validateResourceConfig({
      typeName: "sandboxiac_template",
      config: encodeDynamic(config),
    });
    const paths = res.diagnostics.map(pathOf).sort();
    expect(paths).toEqual(["cpu_count", "name"]);
    expect(errors(res.diagnostics).join("\n")).toContain("got 0");
  });

  it("rejects an invalid api_url in the provider block with its path", async () => {
    const res = await p.provider.validateProviderConfig({
      config: encodeDynamic({
        api_url: "not a url",
        sandbox_url: null,
        domain: null,
        api_key: null,
      }),
    });
    expect(res.diagnostics.map(pathOf)).toEqual(["api_url"]);
  });

  it("configures from the provider block", async () => {
    const res = await p.provider.configureProvider({
      config: encodeDynamic({
        api_url: svc.apiUrl,
        sandbox_url: null,
        domain: null,
        api_key: svc.apiKey,
      }),
    });
    expect(errors(res.diagnostics)).toEqual([]);
  });

  it("plans outputs unknown, an unknown input kept unknown, and file hashes known at plan time", async () => {
    const config = templateConfig("tf-proto");
    const plan = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(null),
      proposedNewState: encodeDynamic(config),
      config: encodeDynamic(config),
    });
    expect(errors(plan.diagnostics)).toEqual([]);
    const planned = decodeDynamic(plan.plannedState) as Obj;
    expect(planned.template_id).toBe(UNKNOWN);
    expect(planned.id).toBe(UNKNOWN);
    expect(planned.files_hashes).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/)]);

    const prov = await p.provider.getProviderSchema({});
    const names = prov.resourceSchemas.sandboxiac_provisioner.block!.attributes.map((a) => a.name);
    const provConfig: Obj = Object.fromEntries(names.map((n) => [n, null]));
    provConfig.template = UNKNOWN;
    provConfig.keep_sandbox = true;
    const provPlan = await p.provider.planResourceChange({
      typeName: "sandboxiac_provisioner",
      priorState: encodeDynamic(null),
      proposedNewState: encodeDynamic(provConfig),
      config: encodeDynamic(provConfig),
    });
    expect(errors(provPlan.diagnostics)).toEqual([]);
    const provPlanned = decodeDynamic(provPlan.plannedState) as Obj;
    expect(provPlanned.template).toBe(UNKNOWN);
    expect(provPlanned.kept_sandbox_id).toBe(UNKNOWN);
  });

  let state: Obj;

  it("applies a create, and the applied state matches the plan", async () => {
    const config = templateConfig("tf-proto", ["v1"]);
    const plan = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(null),
      proposedNewState: encodeDynamic(config),
      config: encodeDynamic(config),
    });
    const apply = await p.provider.applyResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(null),
      plannedState: plan.plannedState,
      config: encodeDynamic(config),
    });
    expect(errors(apply.diagnostics)).toEqual([]);
    state = decodeDynamic(apply.newState) as Obj;
    const planned = decodeDynamic(plan.plannedState) as Obj;
    expect(state.template_id).toMatch(/^[a-z0-9]+$/);
    expect(state.id).toBe(state.template_id);
    expect(state.files_hashes).toEqual(planned.files_hashes);
    expect(state.name).toBe("tf-proto");
    const listed = await svc.call("GET", `/templates/${state.template_id as string}`);
    expect(listed.status).toBe(200);
  });

  it("plans an in-place update with requires_replace empty (the build kept on a tags-only change), and a replace on a new name", async () => {
    const tags = templateConfig("tf-proto", ["v2"]);
    const update = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(state),
      proposedNewState: encodeDynamic({ ...state, tags: ["v2"] }),
      config: encodeDynamic(tags),
    });
    expect(update.requiresReplace).toEqual([]);
    const updated = decodeDynamic(update.plannedState) as Obj;
    expect(updated.template_id).toBe(state.template_id);
    // A tags-only update keeps the build: what follows it (build_id, ref) stays known.
    expect(updated.build_id).toBe(state.build_id);
    expect(updated.ref).toBe(state.ref);
    expect(updated.names).toBe(UNKNOWN);

    const renamed = templateConfig("tf-proto-2", ["v1"]);
    const replace = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(state),
      proposedNewState: encodeDynamic({ ...state, name: "tf-proto-2" }),
      config: encodeDynamic(renamed),
    });
    expect(replace.requiresReplace.map((r) => r.steps[0]?.selector.value)).toEqual(["name"]);
  });

  it("applies an in-place update as planned, calling the service only when the plan's change says so", async () => {
    // GIVEN a name the core compares lower-cased: Terraform sees an update, the core no change.
    const config = templateConfig("TF-Proto", ["v1"]);
    const plan = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(state),
      proposedNewState: encodeDynamic({ ...state, name: "TF-Proto" }),
      config: encodeDynamic(config),
    });
    expect(plan.requiresReplace).toEqual([]);
    const apply = {
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(state),
      plannedState: plan.plannedState,
      config: encodeDynamic(config),
    };
    const before = svc.requests.length;
    const applied = await p.provider.applyResourceChange({
      ...apply,
      plannedPrivate: plan.plannedPrivate,
    });
    expect(errors(applied.diagnostics)).toEqual([]);
    expect(svc.requests.slice(before)).toEqual([]);
    expect(decodeDynamic(applied.newState)).toEqual({ ...state, name: "TF-Proto" });

    const unplanned = await p.provider.applyResourceChange(apply);
    expect(errors(unplanned.diagnostics).join("\n")).toContain("carries no change record");
    expect(decodeDynamic(unplanned.newState)).toEqual(state);
  });

  it("reads the resource back, and imports it from its id alone", async () => {
    const read = await p.provider.readResource({
      typeName: "sandboxiac_template",
      currentState: encodeDynamic(state),
    });
    expect(errors(read.diagnostics)).toEqual([]);
    expect(decodeDynamic(read.newState)).toEqual(state);

    const imported = await p.provider.importResourceState({
      typeName: "sandboxiac_template",
      id: state.id as string,
    });
    expect(errors(imported.diagnostics)).toEqual([]);
    const got = decodeDynamic(imported.importedResources[0].state) as Obj;
    expect(got.id).toBe(state.id);
    expect(got.name).toBe("tf-proto");

    const missing = await p.provider.importResourceState({
      typeName: "sandboxiac_template",
      id: "nosuchtemplate000000",
    });
    expect(errors(missing.diagnostics).join("\n")).toContain("nosuchtemplate000000");
  });

  it("upgrades raw JSON state to the current schema", async () => {
    const { files_hashes: _dropped, ...older } = state;
    const res = await p.provider.upgradeResourceState({
      typeName: "sandboxiac_template",
      version: 0n,
      rawState: { json: new TextEncoder().encode(JSON.stringify({ ...older, gone: 1 })) },
    });
    expect(errors(res.diagnostics)).toEqual([]);
    expect(decodeDynamic(res.upgradedState)).toEqual({ ...state, files_hashes: null });
  });

  it("reads a data source", async () => {
    const res = await p.provider.readDataSource({
      typeName: "sandboxiac_template",
      config: encodeDynamic({
        name: "tf-proto",
        template_id: null,
        build_id: null,
        build_status: null,
        cpu_count: null,
        envd_version: null,
        memory_mb: null,
        names: null,
        public: null,
        tags: null,
      }),
    });
    expect(errors(res.diagnostics)).toEqual([]);
    const got = decodeDynamic(res.state) as Obj;
    expect(got.template_id).toBe(state.template_id);
    expect(got.build_status).toBe("ready");
  });

  it("deletes, and a read of the deleted resource returns null state", async () => {
    const del = await p.provider.applyResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(state),
      plannedState: encodeDynamic(null),
      config: encodeDynamic(null),
    });
    expect(errors(del.diagnostics)).toEqual([]);
    expect(decodeDynamic(del.newState)).toBeNull();
    const read = await p.provider.readResource({
      typeName: "sandboxiac_template",
      currentState: encodeDynamic(state),
    });
    expect(decodeDynamic(read.newState)).toBeNull();
  });

  it("stops work in flight on StopProvider, storing nothing in state", async () => {
    const config = templateConfig("tf-proto-stop");
    (config.build as Obj).steps = [
      { run: ["sleep 30"], user: null, env: null, workdir: null, copy: null },
    ];
    const plan = await p.provider.planResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(null),
      proposedNewState: encodeDynamic(config),
      config: encodeDynamic(config),
    });
    const before = svc.requests.length;
    const applying = p.provider.applyResourceChange({
      typeName: "sandboxiac_template",
      priorState: encodeDynamic(null),
      plannedState: plan.plannedState,
      config: encodeDynamic(config),
    });
    // Stop once the build is running (its request reached the service).
    const building = () => svc.requests.slice(before).some((r) => /\/builds\//.test(r));
    await eventually(async () => building(), { timeoutMs: 30_000 });
    await p.provider.stopProvider({});
    const apply = await applying;
    expect(errors(apply.diagnostics).join("\n")).toMatch(/cancel|stop|abort/i);
    // Nothing half-made in state, and the half-built template is gone from the service.
    expect(decodeDynamic(apply.newState)).toBeNull();
    const lookup = await svc.call("GET", "/templates/aliases/tf-proto-stop");
    expect(lookup.status).toBe(404);
  });
});
