/**
 * The real `@pulumi/pulumi/cmd/dynamic-provider` plugin process, spawned the
 * way the CLI spawns `pulumi-resource-pulumi-nodejs` (docs/pulumi-provider.md#how-the-plugin-runs), and a
 * typed client for the calls the engine makes.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { SandboxIacError } from "../../src/errors";
import type * as pb from "@pulumi/pulumi/proto/provider_pb";
import type { Sdk } from "./sdk";
import { dynamicProviderEntry } from "./sdk";
import { SECRET_SIG, SPECIAL_SIG_KEY, toWire, type Wire, type WireMap } from "./secrets";

/** The engine address the plugin is given: it checks one was passed, then never dials it. */
const DEAD_ENGINE_ADDRESS = "127.0.0.1:1";
/** Longest wait for a killed plugin's output to be read to its end (a grandchild may hold the pipe). */
const PLUGIN_DRAIN_MS = 5_000;
/** The default provider of dynamic resources. */
const PROVIDER_TYPE = "pulumi:providers:pulumi-nodejs";

/** What `Diff` answered. `changes` is tri-state: `undefined` means the engine compares inputs. */
export interface DiffAnswer {
  changes: boolean | undefined;
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/** Options of {@link startPlugin}. */
export interface PluginOptions {
  sdk: Sdk;
  programDir: string;
  project: string;
  /** The CLI's environment, inherited by the plugin. */
  env: NodeJS.ProcessEnv;
  /** Receives the plugin's stdout (after the port line) and stderr, chunk by chunk. */
  log: (text: string, stream: "stdout" | "stderr") => void;
}

type Callback = (err: (Error & { details?: string }) | null, res: unknown) => void;
type RawClient = Record<string, (req: unknown, cb: Callback) => void> & { close(): void };

/** A running plugin; {@link DynamicProviderPlugin.kill} must be called in a `finally`. */
export class DynamicProviderPlugin {
  private constructor(
    private readonly sdk: Sdk,
    private readonly child: ChildProcess,
    private readonly client: RawClient,
    /** Settles once the process is gone and its stdout and stderr are read to the end. */
    private readonly closed: Promise<void>,
  ) {}

  /** Spawns the plugin with cwd = the program directory and connects to the port it prints. */
  static async start(opts: PluginOptions): Promise<DynamicProviderPlugin> {
    const child = spawn(
      process.execPath,
      [dynamicProviderEntry(opts.programDir), DEAD_ENGINE_ADDRESS],
      {
        cwd: opts.programDir,
        // The CLI passes only the `pulumi-nodejs:` namespace here: never the stack config (docs/pulumi-provider.md#engine-harness, gotcha 6).
        env: {
          ...opts.env,
          PULUMI_NODEJS_PROJECT: opts.project,
          PULUMI_PROJECT: opts.project,
          PULUMI_CONFIG: "{}",
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true, // its own process group, so kill() also reaches anything it spawned
      },
    );
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    const killOnExit = (): void => killGroup(child);
    process.once("exit", killOnExit);
    child.once("exit", () => process.removeListener("exit", killOnExit));
    child.stderr.on("data", (d: Buffer) => opts.log(d.toString(), "stderr"));
    try {
      const port = await readPort(child, opts.log);
      const client = new opts.sdk.providerGrpc.ResourceProviderClient(
        `127.0.0.1:${port}`,
        opts.sdk.grpc.credentials.createInsecure(),
      ) as RawClient;
      return new DynamicProviderPlugin(opts.sdk, child, client, closed);
    } catch (err) {
      killGroup(child);
      throw err;
    }
  }

  /** The plugin's process id (its process group id too). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** `Configure` with the whole namespaced stack config, secret values wrapped (docs/pulumi-provider.md#configuration-and-the-configure-race). */
  async configure(config: Record<string, string>, secretKeys: readonly string[]): Promise<void> {
    const args: WireMap = {};
    for (const [k, v] of Object.entries(config)) {
      args[k] = secretKeys.includes(k) ? { [SPECIAL_SIG_KEY]: SECRET_SIG, value: v } : v;
    }
    const req = new this.sdk.providerPb.ConfigureRequest();
    req.setArgs(this.struct(args));
    req.setAcceptsecrets(true);
    req.setAcceptresources(true);
    req.setType(PROVIDER_TYPE);
    req.setName("default");
    await this.call<unknown>("configure", req);
  }

  /** `Check`: returns the checked inputs, or throws with the failures. */
  async check(urn: string, olds: WireMap, news: WireMap): Promise<WireMap> {
    const req = new this.sdk.providerPb.CheckRequest();
    req.setUrn(urn);
    req.setOlds(this.struct(olds));
    req.setNews(this.struct(news));
    const res = await this.call<pb.CheckResponse>("check", req);
    const failures = res.getFailuresList().map((f) => `${f.getProperty()}: ${f.getReason()}`);
    if (failures.length > 0)
      throw new SandboxIacError("invalid_argument", failures.join("; "), {
        operation: "check",
        resourceId: urn,
      });
    return res.getInputs()?.toJavaScript() ?? {};
  }

  /** `Diff` of the old outputs against the checked inputs. */
  async diff(
    urn: string,
    id: string,
    oldOutputs: WireMap,
    news: WireMap,
    oldInputs: WireMap,
  ): Promise<DiffAnswer> {
    const req = new this.sdk.providerPb.DiffRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(this.struct(oldOutputs));
    req.setNews(this.struct(news));
    req.setOldInputs(this.struct(oldInputs));
    const res = await this.call<pb.DiffResponse>("diff", req);
    const kinds = this.sdk.providerPb.DiffResponse.DiffChanges;
    const changes = res.getChanges();
    return {
      changes: changes === kinds.DIFF_SOME ? true : changes === kinds.DIFF_NONE ? false : undefined,
      replaces: res.getReplacesList(),
      deleteBeforeReplace: res.getDeletebeforereplace(),
    };
  }

  /** `Create`: the new ID and outputs. */
  async create(urn: string, inputs: WireMap): Promise<{ id: string; outputs: WireMap }> {
    const req = new this.sdk.providerPb.CreateRequest();
    req.setUrn(urn);
    req.setProperties(this.struct(inputs));
    const res = await this.call<pb.CreateResponse>("create", req);
    return { id: res.getId(), outputs: res.getProperties()?.toJavaScript() ?? {} };
  }

  /** `Update`: the new outputs. */
  async update(
    urn: string,
    id: string,
    oldOutputs: WireMap,
    news: WireMap,
    oldInputs: WireMap,
  ): Promise<WireMap> {
    const req = new this.sdk.providerPb.UpdateRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setOlds(this.struct(oldOutputs));
    req.setNews(this.struct(news));
    req.setOldInputs(this.struct(oldInputs));
    const res = await this.call<pb.UpdateResponse>("update", req);
    return res.getProperties()?.toJavaScript() ?? {};
  }

  /** `Delete` with the old outputs (so it runs the code of the last Create or Update). */
  async delete(urn: string, id: string, oldOutputs: WireMap, oldInputs: WireMap): Promise<void> {
    const req = new this.sdk.providerPb.DeleteRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(this.struct(oldOutputs));
    req.setOldInputs(this.struct(oldInputs));
    await this.call<unknown>("delete", req);
  }

  /** `Read` for refresh: an empty `id` means the resource is gone. */
  async read(
    urn: string,
    id: string,
    oldOutputs: WireMap,
    oldInputs: WireMap,
  ): Promise<{ id: string; outputs: WireMap; inputs?: WireMap }> {
    const req = new this.sdk.providerPb.ReadRequest();
    req.setUrn(urn);
    req.setId(id);
    req.setProperties(this.struct(oldOutputs));
    req.setInputs(this.struct(oldInputs));
    const res = await this.call<pb.ReadResponse>("read", req);
    const inputs = res.getInputs();
    return {
      id: res.getId(),
      outputs: res.getProperties()?.toJavaScript() ?? {},
      ...(inputs ? { inputs: inputs.toJavaScript() } : {}),
    };
  }

  /**
   * Closes the client, kills the plugin's process group and resolves once
   * what the plugin wrote before has been read (the CLI reads a plugin's
   * output to its end: a line written just before, such as a diff's, is
   * still shown), or after {@link PLUGIN_DRAIN_MS} at most. Safe to call twice.
   */
  async kill(): Promise<void> {
    this.client.close();
    killGroup(this.child);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.closed,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, PLUGIN_DRAIN_MS))),
    ]);
    clearTimeout(timer);
  }

  private struct(v: Record<string, Wire>) {
    return this.sdk.structPb.Struct.fromJavaScript(toWire(v));
  }

  private call<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client[method](req, (err, res) => {
        if (!err) return resolve(res as T);
        // grpc-js puts the provider's own message in `details`; the message adds "2 UNKNOWN: ".
        const reason = err.details || err.message;
        reject(
          new SandboxIacError(
            "command_failed",
            `the dynamic provider's ${method} failed: ${reason}`,
            { operation: method, cause: err },
          ),
        );
      });
    });
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone: nothing to clean up.
  }
}

/** Reads the first stdout line (the port), then keeps draining stdout into the log. */
function readPort(
  child: ChildProcess,
  log: (text: string, stream: "stdout") => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    let port: number | undefined;
    child.stdout!.on("data", (d: Buffer) => {
      if (port !== undefined) return log(d.toString(), "stdout");
      buffered += d.toString();
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      port = Number(buffered.slice(0, newline).trim());
      if (buffered.length > newline + 1) log(buffered.slice(newline + 1), "stdout");
      if (Number.isInteger(port) && port > 0) resolve(port);
      else
        reject(
          new SandboxIacError(
            "internal",
            `the dynamic-provider plugin printed ${JSON.stringify(buffered.slice(0, newline))} instead of its port`,
            { operation: "plugin.start" },
          ),
        );
    });
    child.once("exit", (code) => {
      if (port === undefined) {
        reject(
          new SandboxIacError(
            "internal",
            `the dynamic-provider plugin exited with code ${code} before printing its port; see the log`,
            { operation: "plugin.start" },
          ),
        );
      }
    });
    child.once("error", (err) =>
      reject(
        new SandboxIacError(
          "internal",
          `cannot spawn the dynamic-provider plugin: ${err.message}`,
          { operation: "plugin.start", cause: err },
        ),
      ),
    );
  });
}
