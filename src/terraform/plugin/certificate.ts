/**
 * The provider's TLS identity for go-plugin's AutoMTLS: a fresh self-signed
 * ECDSA P-256 certificate for `localhost` per process, made like go-plugin's
 * own (CA, serverAuth and clientAuth), so Terraform can pin it as the only
 * root it trusts for this connection.
 *
 * Node makes and signs with the key; asn1js encodes the certificate's DER.
 * The fuller @peculiar/x509 (with tsyringe and a schema class per X.509 and
 * CMS structure) took a third of the provider's start before the handshake,
 * paid on every one of Terraform's 3 to 4 starts per command (issue 19).
 *
 * @module
 */
import { type KeyObject, generateKeyPair, randomBytes, sign } from "node:crypto";
import { promisify } from "node:util";
import * as asn1 from "asn1js";

/** A certificate and its key, in the forms Node's TLS and the handshake need. */
export interface PluginCertificate {
  /** The certificate, PEM. */
  certPem: string;
  /** The private key, PKCS#8 PEM. */
  keyPem: string;
  /** The certificate, DER as standard base64 without `=` padding (the handshake's last field). */
  derBase64: string;
}

/** Object identifiers (RFC 5280, RFC 5758, X.520). */
const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** keyUsage bits digitalSignature (0), keyEncipherment (2) and keyCertSign (5): 1010 0100, 2 unused bits. */
const KEY_USAGE = Uint8Array.of(0xa4);
const KEY_USAGE_UNUSED_BITS = 2;

/** A context-specific tag (`[n]`). */
function tagged(tagNumber: number): { tagClass: number; tagNumber: number } {
  return { tagClass: 3, tagNumber };
}

function name(): asn1.Sequence {
  const rdn = (oid: string, value: string): asn1.Set =>
    new asn1.Set({
      value: [
        new asn1.Sequence({
          value: [new asn1.ObjectIdentifier({ value: oid }), new asn1.Utf8String({ value })],
        }),
      ],
    });
  return new asn1.Sequence({
    value: [rdn(OID.commonName, "localhost"), rdn(OID.organization, "HashiCorp")],
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

function tbsCertificate(publicKey: KeyObject, now: number): asn1.Sequence {
  // A positive 128-bit serial (the top bit clear, so DER needs no sign byte).
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x10;
  const spki = asn1.fromBER(publicKey.export({ type: "spki", format: "der" }));
  if (spki.offset === -1) throw new Error(`unreadable public key: ${spki.result.error}`);
  return new asn1.Sequence({
    value: [
      new asn1.Constructed({ idBlock: tagged(0), value: [new asn1.Integer({ value: 2 })] }),
      new asn1.Integer({ valueHex: serial }),
      new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.ecdsaWithSha256 })] }),
      name(),
      new asn1.Sequence({
        value: [
          new asn1.UTCTime({ valueDate: new Date(now - 60_000) }),
          new asn1.UTCTime({ valueDate: new Date(now + 24 * 3600_000) }),
        ],
      }),
      name(),
      spki.result,
      new asn1.Constructed({
        idBlock: tagged(3),
        value: [
          new asn1.Sequence({
            value: [
              extension(
                OID.basicConstraints,
                true,
                new asn1.Sequence({ value: [new asn1.Boolean({ value: true })] }),
              ),
              extension(
                OID.keyUsage,
                true,
                new asn1.BitString({ valueHex: KEY_USAGE, unusedBits: KEY_USAGE_UNUSED_BITS }),
              ),
              extension(
                OID.extKeyUsage,
                false,
                new asn1.Sequence({
                  value: [
                    new asn1.ObjectIdentifier({ value: OID.serverAuth }),
                    new asn1.ObjectIdentifier({ value: OID.clientAuth }),
                  ],
                }),
              ),
              extension(
                OID.subjectAltName,
                false,
                new asn1.Sequence({
                  // dNSName is [2] IA5String, implicitly tagged.
                  value: [
                    new asn1.Primitive({
                      idBlock: tagged(2),
                      valueHex: Buffer.from("localhost", "ascii"),
                    }),
                  ],
                }),
              ),
            ],
          }),
        ],
      }),
    ],
  });
}

/** Creates a self-signed certificate valid from a minute ago for 24 hours (go-plugin's choice too). */
export async function createPluginCertificate(): Promise<PluginCertificate> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)("ec", {
    namedCurve: "P-256",
  });
  const tbs = Buffer.from(tbsCertificate(publicKey, Date.now()).toBER());
  // Node signs ECDSA as a DER `Ecdsa-Sig-Value`, the form X.509 carries.
  const signature = sign("sha256", tbs, privateKey);
  const certificate = new asn1.Sequence({
    value: [
      asn1.fromBER(tbs).result,
      new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: OID.ecdsaWithSha256 })] }),
      new asn1.BitString({ valueHex: signature }),
    ],
  });
  const der = Buffer.from(certificate.toBER());
  return {
    certPem: pem("CERTIFICATE", der),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    derBase64: der.toString("base64").replace(/=+$/, ""),
  };
}

function pem(label: string, der: Buffer): string {
  const body = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}
