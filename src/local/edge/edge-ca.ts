/**
 * The service's own certificate authority for the egress edge: the edge
 * terminates a sandbox's TLS to a domain that has `network.rules` with a
 * certificate for that name signed by this CA, which every sandbox of the
 * service trusts. It is made once per data dir (`edge-ca/ca.key`, 0600, and
 * `edge-ca/ca.pem`) and kept, so sandboxes and templates keep trusting it
 * across restarts. The built-in base layer's system store holds it
 * (base-layer.ts). Sandboxes see `edge-ca/trust` read-only: `ca.pem`, and
 * `bundle.pem` (the host's bundle plus this CA, for variables such as
 * `SSL_CERT_FILE` that replace the default store rather than add to it).
 *
 * Encoded by the project's one X.509 encoder (src/wire/x509.ts), as the
 * Terraform provider's certificate is. The extensions are those strict
 * verifiers (Python 3.13's `VERIFY_X509_STRICT`) ask for: key identifiers on
 * both, a critical CA basic constraint.
 *
 * @module
 */
import {
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  X509Certificate,
} from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as tls from "node:tls";
import { pemOf, x509Certificate, x509KeyId } from "../../wire/x509";

/** Directory of the CA in the data dir, and of what sandboxes see of it. */
const CA_DIR = "edge-ca";
/** Subdirectory bound read-only into every sandbox. */
const TRUST_DIR = "trust";
/** The host's bundle (Debian's ca-certificates), the base of `bundle.pem`. */
const HOST_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/** Certificates kept per name, and how long one is used before a fresh one is made. */
const MAX_LEAVES = 1024;
const LEAF_REUSE_MS = 24 * 3600_000;
const LEAF_VALID_MS = 7 * 24 * 3600_000;
const CA_VALID_MS = 10 * 365 * 24 * 3600_000;

/** The CA of one service. */
export interface EdgeCa {
  /** The CA's certificate, PEM. */
  pem: string;
  /** Host directory holding `ca.pem` and `bundle.pem`, bound read-only into sandboxes. */
  trustDir: string;
  /** A TLS context presenting a certificate for `name` (a DNS name), made once and reused. */
  contextFor(name: string): tls.SecureContext;
}

/** What a certificate of this CA names and how long it is valid. */
interface CertificateSpec {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  issuerKey: KeyObject;
  issuerKeyId: Buffer;
  validMs: number;
  /** A DNS name: a leaf for it; undefined: the CA itself. */
  dnsName?: string | undefined;
}

/**
 * Encodes and signs a certificate of this CA (PEM): the CA itself
 * (digitalSignature, keyCertSign, cRLSign) or a leaf for one DNS name
 * (digitalSignature, serverAuth), both with key identifiers, valid from an
 * hour ago (a sandbox's clock may lag the host's a little).
 */
function certificate(spec: CertificateSpec): string {
  const now = Date.now();
  const ca = spec.dnsName === undefined;
  return pemOf(
    "CERTIFICATE",
    x509Certificate({
      subject: { commonName: spec.subject },
      issuer: { commonName: spec.issuer },
      publicKey: spec.publicKey,
      signerKey: spec.issuerKey,
      notBefore: new Date(now - 3600_000),
      notAfter: new Date(now + spec.validMs),
      ca,
      keyUsage: ca ? ["digitalSignature", "keyCertSign", "cRLSign"] : ["digitalSignature"],
      authorityKeyId: spec.issuerKeyId,
      ...(ca ? {} : { extKeyUsage: ["serverAuth"] as const, dnsNames: [spec.dnsName ?? ""] }),
    }),
  );
}

/** Reads the CA of `dir`, or makes one (key 0600) when there is none. */
function loadOrCreate(dir: string): { key: KeyObject; pem: string } {
  const keyFile = path.join(dir, "ca.key");
  const certFile = path.join(dir, "ca.pem");
  if (fs.existsSync(keyFile) && fs.existsSync(certFile)) {
    return {
      key: createPrivateKey(fs.readFileSync(keyFile)),
      pem: fs.readFileSync(certFile, "utf8"),
    };
  }
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  // A name of its own per data dir: two services' CAs are never mistaken for each other.
  const subject = `sandbox-iac egress edge CA ${randomBytes(4).toString("hex")}`;
  const pem = certificate({
    subject,
    issuer: subject,
    publicKey,
    issuerKey: privateKey,
    issuerKeyId: x509KeyId(publicKey),
    validMs: CA_VALID_MS,
  });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${keyFile}.tmp`;
  fs.writeFileSync(tmp, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  fs.writeFileSync(certFile, pem, { mode: 0o644 });
  // The key last: a start killed half-way leaves no key without its certificate.
  fs.renameSync(tmp, keyFile);
  return { key: privateKey, pem };
}

/** Writes `trust/ca.pem` and `trust/bundle.pem` (the host's bundle, then the CA). */
function writeTrustDir(dir: string, caPem: string): string {
  const trust = path.join(dir, TRUST_DIR);
  fs.mkdirSync(trust, { recursive: true, mode: 0o755 });
  fs.chmodSync(trust, 0o755);
  const host = fs.existsSync(HOST_BUNDLE) ? fs.readFileSync(HOST_BUNDLE, "utf8") : "";
  const bundle = `${host}${host && !host.endsWith("\n") ? "\n" : ""}${caPem}`;
  for (const [file, text] of [
    ["ca.pem", caPem],
    ["bundle.pem", bundle],
  ] as const) {
    fs.writeFileSync(path.join(trust, `${file}.tmp`), text, { mode: 0o644 });
    fs.renameSync(path.join(trust, `${file}.tmp`), path.join(trust, file));
  }
  return trust;
}

/** Opens (making it the first time) the edge CA of `dataDir`. */
export function openEdgeCa(dataDir: string): EdgeCa {
  const dir = path.join(dataDir, CA_DIR);
  const { key, pem } = loadOrCreate(dir);
  const caCert = new X509Certificate(pem);
  const issuer = caCert.subject.replace(/^CN=/, "");
  const issuerKeyId = x509KeyId(caCert.publicKey);
  const trustDir = writeTrustDir(dir, pem);
  // One key for every leaf of this process: a key pair per name would cost more than the certificate.
  const leafKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const leafKeyPem = leafKey.privateKey.export({ type: "pkcs8", format: "pem" });
  const leaves = new Map<string, { context: tls.SecureContext; madeAt: number }>();
  return {
    pem,
    trustDir,
    contextFor(name) {
      const kept = leaves.get(name);
      if (kept && Date.now() - kept.madeAt < LEAF_REUSE_MS) return kept.context;
      const cert = certificate({
        subject: name,
        issuer,
        publicKey: leafKey.publicKey,
        issuerKey: key,
        issuerKeyId,
        validMs: LEAF_VALID_MS,
        dnsName: name,
      });
      const context = tls.createSecureContext({ key: leafKeyPem, cert });
      leaves.delete(name);
      leaves.set(name, { context, madeAt: Date.now() });
      if (leaves.size > MAX_LEAVES) leaves.delete(leaves.keys().next().value as string);
      return context;
    },
  };
}
