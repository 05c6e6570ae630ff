#!/usr/bin/env node
/**
 * The `sandbox-iac` command line: `sandbox-iac serve` runs the local sandbox
 * service until SIGINT or SIGTERM; `status` shows what a service holds;
 * `terraform install` writes the provider.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { SandboxIacError, invalidArgument, redact } from "../errors";
import { defaultDataDir, startLocalService } from "../local/service";
import { installProvider, packageVersion } from "../terraform/install";
import { serveApiKey } from "./api-key";
import { parseArgs, type ServeArgs } from "./args";
import { readyLine } from "./ready-line";
import { statusText } from "./status";

function logLine(line: string): void {
  process.stderr.write(`${new Date().toISOString()} ${redact(line)}\n`);
}

async function serve(args: ServeArgs): Promise<void> {
  const { key, source } = serveApiKey(args, process.env, logLine);
  logLine(`API key from ${source}`);
  const service = await startLocalService({
    port: args.port,
    host: args.host,
    dataDir: args.dataDir ?? defaultDataDir(),
    apiKey: key,
    agentBundleDir: args.agentDir,
    maxSandboxes: args.maxSandboxes,
    maxSandboxesPerKey: args.maxSandboxesPerKey,
    insecureRegistries: args.insecureRegistries,
    tls: args.tls && {
      cert: readPem("--tls-cert", args.tls.certFile),
      key: readPem("--tls-key", args.tls.keyFile),
    },
    domain: args.domain,
    maxStepCacheBytes: args.maxStepCacheBytes,
    maxStepCacheEntries: args.maxStepCacheEntries,
    log: logLine,
  });
  process.stdout.write(readyLine(service));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logLine(`${signal} again: exiting without a clean shutdown`);
      process.exit(130);
    }
    stopping = true;
    logLine(`${signal}: stopping sandboxes (they come back paused on the next start)`);
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logLine(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

function readPem(option: string, file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw invalidArgument(
      "cli",
      option,
      file,
      "a readable PEM file",
      `check the path (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.command === "help") {
    process.stdout.write(args.text);
    return;
  }
  if (args.command === "version") {
    process.stdout.write(`sandbox-iac ${packageVersion()}\n`);
    return;
  }
  if (args.command === "status") {
    process.stdout.write(await statusText());
    return;
  }
  if (args.command === "terraform-install") {
    const result = installProvider({ dir: args.dir, version: packageVersion() });
    process.stdout.write(result.instructions);
    return;
  }
  await serve(args);
}

main().catch((err: unknown) => {
  const message = SandboxIacError.is(err) || err instanceof Error ? err.message : String(err);
  process.stderr.write(`sandbox-iac: ${redact(message)}\n`);
  process.exit(SandboxIacError.hasCode(err, "invalid_argument") ? 2 : 1);
});
