/**
 * A certificate authority made for one test run with Debian's `openssl`, and
 * a server certificate it signed for the given names. Clients trust it the
 * way a user trusts a private CA: Node through `NODE_EXTRA_CA_CERTS`.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** The files of a {@link makeTestCa} run, all PEM. */
export interface TestCa {
  /** The CA's certificate: what clients trust. */
  caFile: string;
  /** The server's certificate, signed by the CA. */
  certFile: string;
  /** The server certificate's private key. */
  keyFile: string;
}

/** Writes a CA and a server certificate for `names` (e.g. `*.example.test`) into `dir`. */
export function makeTestCa(dir: string, names: string[]): TestCa {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  run(
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-subj",
    "/CN=sandbox-iac test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
  );
  fs.writeFileSync(
    path.join(dir, "ext.cnf"),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}\n`,
  );
  run(
    "req",
    ...ec,
    "-subj",
    "/CN=sandbox-iac test service",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
  );
  run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
    "-out",
    "server.pem",
  );
  return {
    caFile: path.join(dir, "ca.pem"),
    certFile: path.join(dir, "server.pem"),
    keyFile: path.join(dir, "server.key"),
  };
}
