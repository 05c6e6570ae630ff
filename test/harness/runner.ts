/**
 * The runner: ONE simulated Pulumi command in a fresh Node process (the SDK
 * keeps global state, so a process per run is the honest option). It runs the
 * program under the SDK's mocks, routes every dynamic-resource registration to
 * the {@link Engine}, which drives the real plugin, then saves the state file
 * and writes a {@link HarnessResult} (without `log` and `run`) to the result file.
 *
 * Usage: `node runner.js <args.json>`; exits 1 when the command failed.
 *
 * @module
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type {
  RegisterResourceOutputsRequest,
  RegisterResourceRequest,
  RegisterResourceResponse,
} from "@pulumi/pulumi/proto/resource_pb";
import { DiagnosticCollector } from "./diagnostics";
import { Engine, type Registration } from "./engine";
import { DynamicProviderPlugin } from "./plugin";
import { PLUGIN_PID_FILE, type HarnessResult, type RunnerArgs } from "./result";
import { loadSdk, type Sdk } from "./sdk";
import { containsSecret, stripSecrets, type WireMap } from "./secrets";
import { readState, writeState, type ResourceOptions } from "./state";
import { qualifiedType, resourceUrn, ROOT_STACK_TYPE } from "./urn";

type Callback = (err: unknown, res?: unknown) => void;
interface Monitor {
  registerResource(req: RegisterResourceRequest, cb: Callback): unknown;
  registerResourceOutputs(req: RegisterResourceOutputsRequest, cb: Callback): unknown;
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

async function main(argsFile: string): Promise<number> {
  const args = JSON.parse(fs.readFileSync(argsFile, "utf8")) as RunnerArgs;
  const sdk = loadSdk(args.programDir);
  const programErrors: string[] = [];
  const onProgramError = (e: unknown): void => void programErrors.push(messageOf(e));
  process.on("unhandledRejection", onProgramError);
  process.on("uncaughtException", onProgramError);

  const diagnostics = new DiagnosticCollector();
  let started: Promise<DynamicProviderPlugin> | undefined;
  // Cache the promise, not the plugin: registrations arrive concurrently (docs/pulumi-provider.md#engine-harness, gotcha 2).
  const plugin = (): Promise<DynamicProviderPlugin> =>
    (started ??= DynamicProviderPlugin.start({
      sdk,
      programDir: args.programDir,
      project: args.project,
      env: process.env,
      log: (text, stream) => {
        diagnostics.push(text, stream);
        process.stderr.write(text);
      },
    }).then(async (p) => {
      fs.writeFileSync(path.join(path.dirname(argsFile), PLUGIN_PID_FILE), String(p.pid));
      await p.configure(args.config, args.secretKeys);
      return p;
    }));
  const preview = args.command === "preview";
  const engine = new Engine({
    plugin,
    prior: readState(args.stateFile),
    preview,
    parallel: args.parallel,
  });
  let stackOutputs: WireMap = {};
  try {
    if (args.command === "refresh") await engine.refresh();
    else if (args.command === "destroy") await engine.destroy();
    else {
      stackOutputs = await runProgram(sdk, args, engine, preview);
      if (engine.errors.length === 0 && programErrors.length === 0) await engine.finishUp();
    }
  } catch (e) {
    if (engine.errors.length === 0) programErrors.push(messageOf(e));
  } finally {
    if (started) await (await started.catch(() => undefined))?.kill();
  }
  // Registration failures also surface in the program; report them once, from the engine.
  const errors = engine.errors.length > 0 ? engine.errors : [...new Set(programErrors)];
  if (!preview) writeState(args.stateFile, engine.state());
  const result: Omit<HarnessResult, "log" | "run"> = {
    operations: engine.operations,
    outputs: stripSecrets(stackOutputs),
    secretOutputs: Object.keys(stackOutputs).filter((k) => containsSecret(stackOutputs[k])),
    state: engine.state(),
    errors,
    diagnostics: diagnostics.flush(),
  };
  fs.writeFileSync(args.resultFile, JSON.stringify(result));
  return errors.length > 0 ? 1 : 0;
}

/** Runs the program under mocks with the engine behind the monitor; returns the stack outputs in wire form. */
async function runProgram(
  sdk: Sdk,
  args: RunnerArgs,
  engine: Engine,
  preview: boolean,
): Promise<WireMap> {
  const { pulumi, structPb, resourcePb } = sdk;
  await pulumi.runtime.setMocks(
    {
      newResource: (a) => ({ id: a.custom ? `${a.name}_id` : undefined, state: a.inputs }),
      call: () => ({}),
    },
    args.project,
    args.stack,
    preview,
  );
  pulumi.runtime.setAllConfig(args.config, args.secretKeys);
  const monitor = sdk.settings.getMonitor() as Monitor;
  const mockRegister = monitor.registerResource.bind(monitor);
  const stackUrn = resourceUrn(
    args.stack,
    args.project,
    "",
    ROOT_STACK_TYPE,
    `${args.project}-${args.stack}`,
  );
  let stackOutputs: WireMap = {};

  const respond = (urn: string, id: string, outputs: WireMap) => {
    const res = new resourcePb.RegisterResourceResponse();
    res.setUrn(urn);
    res.setId(id);
    res.setObject(structPb.Struct.fromJavaScript(outputs));
    return res;
  };
  monitor.registerResource = (req, cb) => {
    const type: string = req.getType();
    const urn = resourceUrn(args.stack, args.project, req.getParent(), type, req.getName());
    if (!req.getCustom()) {
      cb(null, respond(urn, "", {})); // components: not modelled in state
    } else if (!type.startsWith("pulumi-nodejs:dynamic")) {
      // Other custom resources fall through to plain mocks, with the engine's URN.
      void mockRegister(req, (err, res) =>
        cb(err, err ? undefined : (res as RegisterResourceResponse).setUrn(urn)),
      );
    } else {
      void engine.register(toRegistration(req, urn)).then(
        (r) => cb(null, respond(urn, r.id, r.outputs)),
        (e: unknown) => cb(e),
      );
    }
  };
  monitor.registerResourceOutputs = (req, cb) => {
    if (req.getUrn() === stackUrn) stackOutputs = req.getOutputs()?.toJavaScript() ?? {};
    cb(null, {});
  };

  const entry = require.resolve(args.programDir);
  const load = createRequire(entry);
  try {
    await pulumi.runtime.runInPulumiStack(async () => {
      const mod = load(entry);
      // Like the language host: an exported function (or ES default function) is the program.
      const fn =
        typeof mod === "function"
          ? mod
          : mod?.__esModule && typeof mod.default === "function"
            ? mod.default
            : undefined;
      return fn ? await fn() : mod;
    });
  } finally {
    await sdk.settings.waitForRPCs().catch(() => undefined);
  }
  return stackOutputs;
}

function toRegistration(req: RegisterResourceRequest, urn: string): Registration {
  const parent: string = req.getParent();
  const options: ResourceOptions = {};
  const lists = {
    ignoreChanges: req.getIgnorechangesList(),
    replaceOnChanges: req.getReplaceonchangesList(),
    additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
  };
  for (const [key, list] of Object.entries(lists))
    if (list.length > 0) options[key as keyof typeof lists] = list;
  if (req.getProtect()) options.protect = true;
  if (req.getDeletebeforereplace()) options.deleteBeforeReplace = true;
  if (req.getRetainondelete()) options.retainOnDelete = true;
  return {
    urn,
    type: req.getType(),
    name: req.getName(),
    parent: qualifiedType(parent) === ROOT_STACK_TYPE ? "" : parent,
    inputs: req.getObject()?.toJavaScript() ?? {},
    dependencies: [...new Set(req.getDependenciesList())],
    options,
  };
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
