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
 * Node makes the keys and signs; asn1js encodes the DER, as the Terraform
 * provider's certificate does (src/terraform/plugin/certificate.ts). The
 * extensions are those strict verifiers (Python 3.13's `VERIFY_X509_STRICT`)
 * ask for: key identifiers on both, a critical CA basic constraint.
 *
 * @module
 */
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as tls from "node:tls";
import * as asn1 from "asn1js";

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

const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
} as const;

/** The CA of one service. */
export interface EdgeCa {
  /** The CA's certificate, PEM. */
  pem: string;
  /** Host directory holding `ca.pem` and `bundle.pem`, bound read-only into sandboxes. */
  trustDir: string;
  /** A TLS context presenting a certificate for `name` (a DNS name), made once and reused. */
  contextFor(name: string): tls.SecureContext;
}

function tagged(tagNumber: number): { tagClass: number; tagNumber: number } {
  return { tagClass: 3, tagNumber };
}

function nameOf(commonName: string): asn1.Sequence {
  return new asn1.Sequence({
    value: [
      new asn1.Set({
        value: [
          new asn1.Sequence({
            value: [
              new asn1.ObjectIdentifier({ value: OID.commonName }),
              new asn1.Utf8String({ value: commonName }),
            ],
          }),
        ],
      }),
    ],
  });
}

function extension(oid: string, critical: boolean, value: asn1.BaseBlock): asn1.Sequence {
  return new asn1.Sequence({
    value: [
      new asn1.ObjectIdentifier({ value: oid }),
      ...(critical ? [new asn1.Boolean({ value: true })] : []),
      new asn1.OctetString({ valueHex: value.toBER() }),
    ],
  });
}

/** A key identifier: SHA-1 of the DER SubjectPublicKeyInfo (RFC 7093 §2, method 4's hash choice aside). */
function keyId(publicKey: KeyObject): Buffer {
  return createHash("sha1")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest();
}

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

/** Encodes and signs a certificate; PEM. */
function certificate(spec: CertificateSpec): string {
  const now = Date.now();
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x10;
  const spki = asn1.fromBER(spec.publicKey.export({ type: "spki", format: "der" }));
  if (spki.offset === -1) throw new Error(`unreadable public key: ${spki.result.error}`);
  const ca = spec.dnsName === undefined;
  const extensions = [
    extension(
      OID.basicConstraints,
      true,
      new asn1.Sequence({ value: ca ? [new asn1.Boolean({ value: true })] : [] }),
    ),
    // CA: digitalSignature, keyCertSign, cRLSign (1000 0110, 1 unused bit); leaf: digitalSignature.
    extension(
      OID.keyUsage,
      true,
      ca
        ? new asn1.BitString({ valueHex: Uint8Array.of(0x86), unusedBits: 1 })
        : new asn1.BitString({ valueHex: Uint8Array.of(0x80), unusedBits: 7 }),
    ),
    extension(
      OID.subjectKeyIdentifier,
      false,
      new asn1.OctetString({ valueHex: keyId(spec.publicKey) }),
    ),
    extension(
      OID.authorityKeyIdentifier,
      false,
      new asn1.Sequence({
        value: [new asn1.Primitive({ idBlock: tagged(0), valueHex: spec.issuerKeyId })],
      }),
    ),
  ];
  if (!ca) {
    extensions.push(
      extension(
        OID.extKeyUsage,
        false,
        new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.serverAuth })] }),
      ),
      extension(
        OID.subjectAltName,
        false,
        new asn1.Sequence({
          value: [
            new asn1.Primitive({
              idBlock: tagged(2),
              valueHex: Buffer.from(spec.dnsName ?? "", "ascii"),
            }),
          ],
        }),
      ),
    );
  }
  const algorithm = () =>
    new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.ecdsaWithSha256 })] });
  const tbs = new asn1.Sequence({
    value: [
      new asn1.Constructed({ idBlock: tagged(0), value: [new asn1.Integer({ value: 2 })] }),
      new asn1.Integer({ valueHex: serial }),
      algorithm(),
      nameOf(spec.issuer),
      new asn1.Sequence({
        value: [
          new asn1.UTCTime({ valueDate: new Date(now - 3600_000) }),
          new asn1.UTCTime({ valueDate: new Date(now + spec.validMs) }),
        ],
      }),
      nameOf(spec.subject),
      spki.result,
      new asn1.Constructed({
        idBlock: tagged(3),
        value: [new asn1.Sequence({ value: extensions })],
      }),
    ],
  });
  const tbsDer = Buffer.from(tbs.toBER());
  const der = new asn1.Sequence({
    value: [
      asn1.fromBER(tbsDer).result,
      algorithm(),
      new asn1.BitString({ valueHex: sign("sha256", tbsDer, spec.issuerKey) }),
    ],
  }).toBER();
  const body = Buffer.from(der)
    .toString("base64")
    .replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN CERTIFICATE-----\n${body}-----END CERTIFICATE-----\n`;
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
    issuerKeyId: keyId(publicKey),
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
  const issuerKeyId = keyId(caCert.publicKey);
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
