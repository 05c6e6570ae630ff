/**
 * Runs the CDK example end to end the way a pipeline does: copy the example
 * app, synthesize it by running it with Node (the `cdktn` CLI needs Node 22),
 * install the provider with `sandbox-iac terraform install`, then drive
 * `terraform` in `cdktf.out/stacks/<stack>`. Shared by test/cdk/*.e2e.test.ts
 * and `npm run demo:cdk`. Processes run asynchronously: the local service may
 * live in this very process and must keep answering.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..", "..");

/** The two runtimes and their example apps. */
export type Runtime = "cdktn" | "cdktf";

/** The stack the examples declare. */
export const STACK = "sandboxes";

/** Output of a finished process. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `file args` in `cwd`; never throws on a non-zero exit (the caller checks `code`). */
export function run(
  file: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") reject(new Error(err.message, { cause: err }));
        else resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
      },
    );
  });
}

/** Like {@link run}, but a non-zero exit is an error carrying the output's tail. */
export async function runOk(
  file: string,
  args: readonly string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
): Promise<Ran> {
  const ran = await run(file, args, cwd, env);
  if (ran.code !== 0) {
    const tail = (ran.stdout + ran.stderr).split("\n").slice(-40).join("\n");
    throw new Error(`${path.basename(file)} ${args.join(" ")} exited ${ran.code}:\n${tail}`);
  }
  return ran;
}

/** The example app of `runtime`. */
export function exampleDir(runtime: Runtime): string {
  return path.join(ROOT, "examples", `${runtime}-basic`);
}

/**
 * Copies the example of `runtime` into `workDir/app` (links followed), links
 * this checkout's packages into it, compiles it and runs it with Node.
 * Returns the synthesized stack directory.
 */
export async function synthExample(runtime: Runtime, workDir: string): Promise<string> {
  const app = path.join(workDir, "app");
  fs.cpSync(exampleDir(runtime), app, {
    recursive: true,
    dereference: true,
    filter: (src) => !/[/\\](node_modules|bin|cdktf\.out|\.terraform)$/.test(src),
  });
  const link = path.join(ROOT, "examples", "cdktn-basic", "link.js");
  await runOk(process.execPath, [link, app], ROOT);
  await runOk(
    process.execPath,
    [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json"],
    app,
  );
  await runOk(process.execPath, [path.join("bin", "main.js")], app, {
    ...process.env,
    CHECKPOINT_DISABLE: "1",
  });
  return path.join(app, "cdktf.out", "stacks", STACK);
}

/** Installs the provider into `pluginDir` with the built CLI (`sandbox-iac terraform install`). */
export async function installProvider(pluginDir: string): Promise<Ran> {
  return runOk(
    process.execPath,
    [path.join(ROOT, "dist", "cli", "main.js"), "terraform", "install", "--dir", pluginDir],
    ROOT,
  );
}

/** Where terraform is, or undefined when it is not on PATH. */
export function findTerraform(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, "terraform");
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The environment terraform runs in: the service from `E2B_*`, no telemetry,
 * no prompts, and its own (empty) CLI configuration in `workDir`, so neither
 * the user's ~/.terraformrc nor its absence changes what terraform prints.
 */
export function terraformEnv(
  service: { apiUrl: string; sandboxUrl: string; apiKey: string },
  workDir: string,
): NodeJS.ProcessEnv {
  const cliConfig = path.join(workDir, "terraform.rc");
  fs.writeFileSync(cliConfig, "# providers come from terraform init -plugin-dir\n");
  return {
    ...process.env,
    TF_CLI_CONFIG_FILE: cliConfig,
    E2B_API_URL: service.apiUrl,
    E2B_SANDBOX_URL: service.sandboxUrl,
    E2B_API_KEY: service.apiKey,
    CHECKPOINT_DISABLE: "1",
    TF_IN_AUTOMATION: "1",
    TF_INPUT: "0",
  };
}
