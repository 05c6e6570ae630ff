/**
 * The provider process's program, started by main.ts (the entry Terraform
 * runs, through the launcher that `sandbox-iac terraform install` writes):
 * checks the magic cookie, serves tfplugin6 with AutoMTLS on a unix socket,
 * prints the handshake line, and exits after `GRPCController.Shutdown`.
 *
 * @module
 */
import { closeSync } from "node:fs";
import { redact } from "../errors";
import {
  CLIENT_CERT_ENV,
  NOT_BY_HAND,
  SOCKET_DIR_ENV,
  startedByTerraform,
} from "./plugin/handshake";
import { watchParent } from "./plugin/parent-watch";
import { servePlugin } from "./plugin/server";
import { lazyProviderService } from "./provider/lazy-service";
import { ProviderRuntime } from "./provider/runtime";
import { readServedSchema, servedSchema } from "./provider/served-schema";

/**
 * One progress line (a build log line, a setup command's output) on stderr,
 * prefixed `[INFO] `: go-plugin logs such a line at INFO as it is, so Terraform
 * shows it with `TF_LOG_PROVIDER=INFO` (or `TF_LOG=INFO`) under its own
 * timestamp, the only one on the line. (An hclog JSON line would add
 * go-plugin's `timestamp=` and `@module=` pairs; docs/terraform-provider.md#provider-logs.)
 * A multi-line message becomes one prefixed line per line.
 */
function log(line: string): void {
  for (const part of redact(line).split("\n")) process.stderr.write(`[INFO] ${part}\n`);
}

/**
 * Closes stdout once the handshake line is out. go-plugin keeps reading the
 * provider's stdout, and when the provider exits first its reader fails with
 * "[ERROR] provider: error encountered while scanning stdout: read |0: file
 * already closed" on a clean exit (a race in go-plugin). With stdout closed
 * here, its reader meets end-of-file long before the exit. Anything written
 * to stdout afterwards goes to stderr, where go-plugin logs it.
 */
function releaseStdout(): void {
  const toStderr: typeof process.stdout.write = process.stderr.write.bind(process.stderr);
  process.stdout.write = toStderr;
  closeSync(1);
}

async function main(afterHandshake: () => void): Promise<void> {
  if (!startedByTerraform(process.env)) {
    process.stderr.write(NOT_BY_HAND);
    process.exit(1);
  }
  const clientCertPem = process.env[CLIENT_CERT_ENV];
  if (!clientCertPem) {
    process.stderr.write(
      `sandboxiac provider: ${CLIENT_CERT_ENV} is not set; Terraform sets it (AutoMTLS) for every provider it starts: use Terraform >= 0.13\n`,
    );
    process.exit(1);
  }
  // Terraform handles Ctrl-C and tells the provider through StopProvider.
  process.on("SIGINT", () => undefined);
  // Once Terraform is gone (killed), nobody reads stderr: a log line's EPIPE must not end the
  // provider before it has stopped what was in flight (watchParent below).
  process.stderr.on("error", () => undefined);
  const runtime = new ProviderRuntime(process.cwd(), log);
  // The schema the build wrote beside this script; without it (the compiled
  // sources run before the build's last step), the same schema from the descriptors.
  const schema =
    readServedSchema(__dirname) ?? servedSchema((await import("./catalog")).defaultCatalog());
  const server = await servePlugin({
    provider: lazyProviderService(schema, runtime, log),
    clientCertPem,
    socketDir: process.env[SOCKET_DIR_ENV] || undefined,
  });
  process.stdout.write(`${server.handshake}\n`);
  releaseStdout();
  afterHandshake();
  // Terraform killed (SIGKILL) or crashed sends no Shutdown: stop what is in flight, as
  // StopProvider does (a setup command is killed, a sandbox made for it deleted), then exit.
  watchParent((parentPid) => {
    log(
      `sandboxiac provider: Terraform (pid ${parentPid}) went away without shutting the provider down: stopping what was in flight and exiting`,
    );
    runtime.stopAll("Terraform went away (killed or crashed)");
    void server.close();
  });
  await server.closed;
  process.exit(0);
}

/**
 * Runs the provider until Terraform shuts it down, then exits the process;
 * `afterHandshake` runs once the handshake line is out.
 */
export function runProvider(afterHandshake: () => void = () => undefined): void {
  main(afterHandshake).catch((err: unknown) => {
    log(`sandboxiac provider: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
