/**
 * The provider's TLS identity for go-plugin's AutoMTLS: a fresh self-signed
 * ECDSA P-256 certificate for `localhost` per process, made like go-plugin's
 * own (CA, serverAuth and clientAuth), so Terraform can pin it as the only
 * root it trusts for this connection.
 *
 * @module
 */
// @peculiar/x509 resolves its services with tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

/** A certificate and its key, in the forms Node's TLS and the handshake need. */
export interface PluginCertificate {
  /** The certificate, PEM. */
  certPem: string;
  /** The private key, PKCS#8 PEM. */
  keyPem: string;
  /** The certificate, DER as standard base64 without `=` padding (the handshake's last field). */
  derBase64: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" } as const;

/** Creates a self-signed certificate valid from a minute ago for 24 hours (go-plugin's choice too). */
export async function createPluginCertificate(): Promise<PluginCertificate> {
  const crypto = webcrypto;
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
        .toString("hex")
        .replace(/^[89a-f]/, "1"),
      name: "CN=localhost, O=HashiCorp",
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 24 * 3600_000),
      keys: keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature |
            x509.KeyUsageFlags.keyEncipherment |
            x509.KeyUsageFlags.keyCertSign,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([
          x509.ExtendedKeyUsage.serverAuth,
          x509.ExtendedKeyUsage.clientAuth,
        ]),
        new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "localhost" }]),
      ],
    },
    crypto,
  );
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return {
    certPem: cert.toString("pem"),
    keyPem: pem("PRIVATE KEY", pkcs8),
    derBase64: Buffer.from(cert.rawData).toString("base64").replace(/=+$/, ""),
  };
}

function pem(label: string, der: Buffer): string {
  const body = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}
