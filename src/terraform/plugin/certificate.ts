/**
 * The provider's TLS identity for go-plugin's AutoMTLS: a fresh self-signed
 * ECDSA P-256 certificate for `localhost` per process, made like go-plugin's
 * own (CA, serverAuth and clientAuth), so Terraform can pin it as the only
 * root it trusts for this connection.
 *
 * Encoded by the project's one X.509 encoder (src/wire/x509.ts, which says
 * why it is not @peculiar/x509).
 *
 * @module
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import { pemOf, x509Certificate } from "../../wire/x509";

/** A certificate and its key, in the forms Node's TLS and the handshake need. */
export interface PluginCertificate {
  /** The certificate, PEM. */
  certPem: string;
  /** The private key, PKCS#8 PEM. */
  keyPem: string;
  /** The certificate, DER as standard base64 without `=` padding (the handshake's last field). */
  derBase64: string;
}

/** Creates a self-signed certificate valid from a minute ago for 24 hours (go-plugin's choice too). */
export async function createPluginCertificate(): Promise<PluginCertificate> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)("ec", {
    namedCurve: "P-256",
  });
  const now = Date.now();
  const name = { commonName: "localhost", organization: "HashiCorp" };
  const der = x509Certificate({
    subject: name,
    issuer: name,
    publicKey,
    signerKey: privateKey,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 24 * 3600_000),
    ca: true,
    keyUsage: ["digitalSignature", "keyEncipherment", "keyCertSign"],
    extKeyUsage: ["serverAuth", "clientAuth"],
    dnsNames: ["localhost"],
  });
  return {
    certPem: pemOf("CERTIFICATE", der),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    derBase64: der.toString("base64").replace(/=+$/, ""),
  };
}
