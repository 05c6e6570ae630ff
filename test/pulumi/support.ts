/**
 * Shared set-up of the Pulumi scenario tests: the real local service behind a
 * request-counting pass-through proxy, program directories in temp dirs with
 * the package linked in, and the stack config that points at the service.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { destroy, isSecret, type RunOptions } from "../harness";
import { call } from "../local/support";
import { startService, type ServiceOptions } from "../support/service";

const REPO = path.resolve(__dirname, "..", "..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { linkPackages } = require(path.join(REPO, "examples", "pulumi-basic", "link.js")) as {
  linkPackages: (dir: string) => void;
};

/** The service as the tests see it: reached through a proxy that logs every request. */
export interface TestService {
  /** URL of the proxy; give it to programs as `sandbox-iac:apiUrl`. */
  apiUrl: string;
  apiKey: string;
  /** The service's data dir (to watch what it writes, e.g. an upload in progress). */
  dataDir: string;
  /** `METHOD /path?query` of every request that went through the proxy. */
  requests: string[];
  /** A control-API call made by the test itself (not counted). */
  call(method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** Fails early with a clear message when the package was not built (programs load `dist/`). */
export function assertBuilt(): void {
  if (!existsSync(path.join(REPO, "dist", "pulumi", "index.js"))) {
    throw new Error(
      "dist/pulumi/index.js is missing: run `npm run build` before the Pulumi scenario tests",
    );
  }
}

/** Starts the local service in-process (the shared fixture) and a counting proxy in front of it. */
export async function startTestService(opts: ServiceOptions = {}): Promise<TestService> {
  const service = await startService(opts);
  const target = new URL(service.apiUrl);
  const requests: string[] = [];
  const proxy = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const apiUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    apiUrl,
    apiKey: service.apiKey,
    dataDir: service.dataDir,
    requests,
    call: (method, route, body) => call(service, method, route, body),
    async close() {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await service.close();
    },
  };
}

/** Copies `test/pulumi/programs/<name>` into a temp dir with the package linked; returns the dir. */
function programDir(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `pulumi-program-${name}-`));
  cpSync(path.join(__dirname, "programs", name), dir, { recursive: true });
  linkPackages(dir);
  return dir;
}

/** Harness options: the state file in `dir`, the service in stack config (API key secret), plus program config. */
export function stackOptions(
  svc: TestService,
  dir: string,
  config: Record<string, unknown> = {},
): RunOptions {
  return {
    stateFile: path.join(dir, "state.json"),
    config: { "sandbox-iac:apiUrl": svc.apiUrl, "sandbox-iac:apiKey": svc.apiKey, ...config },
    secretConfig: ["sandbox-iac:apiKey"],
    timeoutMs: 300_000,
  };
}

/** Operations as `op name`, for readable assertions. */
export function ops(result: { operations: Array<{ op: string; name: string }> }): string[] {
  return result.operations.map((o) => `${o.op} ${o.name}`);
}

/** Strings holding `secret` outside a secret wrapper (the harness keeps secrets wrapped, unencrypted), anywhere in `value`. */
export function plaintextOccurrences(value: unknown, secret: string): number {
  if (isSecret(value)) return 0;
  if (typeof value === "string") return value.includes(secret) ? 1 : 0;
  if (value !== null && typeof value === "object") {
    return Object.values(value).reduce((n: number, v) => n + plaintextOccurrences(v, secret), 0);
  }
  return 0;
}

/** One Pulumi scenario's fixture: the service and the program directory, set by `beforeAll`. */
export interface PulumiStack {
  svc: TestService;
  dir: string;
}

/**
 * Registers the hooks every Pulumi scenario file needs: checks the build,
 * starts the service, copies `programs/<program>` (then `prepare` adds files),
 * and afterwards closes the service and removes the directory. With
 * `destroyAfter`, the stack is destroyed first so nothing outlives a failing test.
 */
export function pulumiStack(
  program: string,
  options: {
    prepare?: ((dir: string) => void) | undefined;
    destroyAfter?: boolean | undefined;
    /** The service's options, read when it starts (after earlier `beforeAll`s). @default none */
    service?: (() => ServiceOptions) | undefined;
  } = {},
): PulumiStack {
  const stack = {} as PulumiStack;
  beforeAll(async () => {
    assertBuilt();
    stack.svc = await startTestService(options.service?.() ?? {});
    stack.dir = programDir(program);
    options.prepare?.(stack.dir);
  });
  afterAll(async () => {
    if (options.destroyAfter && stack.svc && stack.dir) {
      await destroy(stack.dir, stackOptions(stack.svc, stack.dir)).catch(() => undefined);
    }
    await stack.svc?.close();
    if (stack.dir) rmSync(stack.dir, { recursive: true, force: true });
  });
  return stack;
}

/** A file of a volume read through the content API with the volume's token: its text, or the HTTP status when not 200. */
export async function volumeFile(
  svc: TestService,
  volumeID: string,
  file: string,
): Promise<number | string> {
  const vol = (await svc.call("GET", `/volumes/${volumeID}`)).body as { token: string };
  const res = await fetch(`${svc.apiUrl}/volumecontent/${volumeID}/file?path=${file}`, {
    headers: { Authorization: `Bearer ${vol.token}` },
  });
  return res.status === 200 ? res.text() : res.status;
}
