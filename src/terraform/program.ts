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
import { servePlugin } from "./plugin/server";
import { lazyProviderService } from "./provider/lazy-service";
import { ProviderRuntime } from "./provider/runtime";
import { readServedSchema, servedSchema } from "./provider/served-schema";

/**
 * One progress line (a build log line, a setup command's output, a duration)
 * as an hclog JSON line on stderr, the format terraform-plugin-log writes:
 * go-plugin logs it at its level, so Terraform shows it with
 * `TF_LOG_PROVIDER=INFO` (or `TF_LOG=INFO`); a plain line would only show at
 * DEBUG (docs/terraform-provider.md#provider-logs).
 */
function log(line: string): void {
  const entry = {
    "@level": "info",
    "@message": redact(line),
    "@module": "sandboxiac",
    // go-plugin parses exactly six fractional digits, else it treats the line as plain text.
    "@timestamp": new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z"),
  };
  process.stderr.write(`${JSON.stringify(entry)}\n`);
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
