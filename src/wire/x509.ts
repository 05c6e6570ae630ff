/**
 * X.509 certificates as the project makes them (RFC 5280): ECDSA P-256 with
 * SHA-256, a name of a common name and optionally an organization, and the
 * few extensions its two issuers need, in this order: basic constraints,
 * key usage, key identifiers, extended key usage, DNS subject names. The one
 * encoder behind the Terraform provider's go-plugin certificate
 * (src/terraform/plugin/certificate.ts) and the egress edge's CA and leaves
 * (src/local/edge/edge-ca.ts).
 *
 * Node makes the keys and signs; asn1js encodes the DER. The fuller
 * @peculiar/x509 took a third of the Terraform provider's start before its
 * handshake, paid on every one of Terraform's 3 to 4 starts per command.
 *
 * @module
 */
import { createHash, type KeyObject, randomBytes, sign } from "node:crypto";
import * as asn1 from "asn1js";

/** Object identifiers (RFC 5280, RFC 5758, X.520). */
const OID = {
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
} as const;

/** keyUsage bits (RFC 5280 §4.2.1.3), numbered from the most significant bit. */
const KEY_USAGE_BIT = {
  digitalSignature: 0,
  keyEncipherment: 2,
  keyCertSign: 5,
  cRLSign: 6,
} as const;

/** A distinguished name: a common name, and an organization when given. */
interface X509Name {
  commonName: string;
  organization?: string | undefined;
}

/** What one certificate says and who signs it. */
export interface X509Spec {
  subject: X509Name;
  issuer: X509Name;
  /** The subject's public key. */
  publicKey: KeyObject;
  /** The issuer's private key, which signs (the subject's own for a self-signed one). */
  signerKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** Basic constraints (critical): a CA, or an end entity. */
  ca: boolean;
  /** Key usage bits (critical). */
  keyUsage: ReadonlyArray<keyof typeof KEY_USAGE_BIT>;
  /**
   * Subject and authority key identifiers, the authority's being this one.
   * @default undefined: neither extension
   */
  authorityKeyId?: Buffer | undefined;
  /** Extended key usages. @default none: no extension */
  extKeyUsage?: ReadonlyArray<"serverAuth" | "clientAuth"> | undefined;
  /** DNS names (subjectAltName). @default none: no extension */
  dnsNames?: readonly string[] | undefined;
}

/** A context-specific tag (`[n]`). */
function tagged(tagNumber: number): { tagClass: number; tagNumber: number } {
  return { tagClass: 3, tagNumber };
}

function nameOf(name: X509Name): asn1.Sequence {
  const rdn = (oid: string, value: string): asn1.Set =>
    new asn1.Set({
      value: [
        new asn1.Sequence({
          value: [new asn1.ObjectIdentifier({ value: oid }), new asn1.Utf8String({ value })],
        }),
      ],
    });
  return new asn1.Sequence({
    value: [
      rdn(OID.commonName, name.commonName),
      ...(name.organization !== undefined ? [rdn(OID.organization, name.organization)] : []),
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

/** The key usage bit string in DER's shortest form (trailing zero bits unused). */
function keyUsageBits(usages: X509Spec["keyUsage"]): asn1.BitString {
  let bits = 0;
  for (const u of usages) bits |= 0x8000 >> KEY_USAGE_BIT[u];
  const bytes = bits & 0xff ? Uint8Array.of(bits >> 8, bits & 0xff) : Uint8Array.of(bits >> 8);
  let unusedBits = 0;
  while (unusedBits < 7 && !(bytes[bytes.length - 1] & (1 << unusedBits))) unusedBits++;
  return new asn1.BitString({ valueHex: bytes, unusedBits });
}

/** A key identifier: SHA-1 of the DER SubjectPublicKeyInfo (RFC 7093 §2, method 4's hash choice aside). */
export function x509KeyId(publicKey: KeyObject): Buffer {
  return createHash("sha1")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest();
}

function extensionsOf(spec: X509Spec): asn1.Sequence[] {
  const list = [
    extension(
      OID.basicConstraints,
      true,
      new asn1.Sequence({ value: spec.ca ? [new asn1.Boolean({ value: true })] : [] }),
    ),
    extension(OID.keyUsage, true, keyUsageBits(spec.keyUsage)),
  ];
  if (spec.authorityKeyId) {
    list.push(
      extension(
        OID.subjectKeyIdentifier,
        false,
        new asn1.OctetString({ valueHex: x509KeyId(spec.publicKey) }),
      ),
      extension(
        OID.authorityKeyIdentifier,
        false,
        new asn1.Sequence({
          value: [new asn1.Primitive({ idBlock: tagged(0), valueHex: spec.authorityKeyId })],
        }),
      ),
    );
  }
  if (spec.extKeyUsage?.length) {
    list.push(
      extension(
        OID.extKeyUsage,
        false,
        new asn1.Sequence({
          value: spec.extKeyUsage.map((u) => new asn1.ObjectIdentifier({ value: OID[u] })),
        }),
      ),
    );
  }
  if (spec.dnsNames?.length) {
    list.push(
      extension(
        OID.subjectAltName,
        false,
        new asn1.Sequence({
          // dNSName is [2] IA5String, implicitly tagged.
          value: spec.dnsNames.map(
            (n) => new asn1.Primitive({ idBlock: tagged(2), valueHex: Buffer.from(n, "ascii") }),
          ),
        }),
      ),
    );
  }
  return list;
}

/** Encodes and signs a certificate; its DER. */
export function x509Certificate(spec: X509Spec): Buffer {
  // A positive 128-bit serial (the top bit clear, so DER needs no sign byte).
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x10;
  const spki = asn1.fromBER(spec.publicKey.export({ type: "spki", format: "der" }));
  if (spki.offset === -1) throw new Error(`unreadable public key: ${spki.result.error}`);
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
          new asn1.UTCTime({ valueDate: spec.notBefore }),
          new asn1.UTCTime({ valueDate: spec.notAfter }),
        ],
      }),
      nameOf(spec.subject),
      spki.result,
      new asn1.Constructed({
        idBlock: tagged(3),
        value: [new asn1.Sequence({ value: extensionsOf(spec) })],
      }),
    ],
  });
  const tbsDer = Buffer.from(tbs.toBER());
  // Node signs ECDSA as a DER `Ecdsa-Sig-Value`, the form X.509 carries.
  const der = new asn1.Sequence({
    value: [
      asn1.fromBER(tbsDer).result,
      algorithm(),
      new asn1.BitString({ valueHex: sign("sha256", tbsDer, spec.signerKey) }),
    ],
  }).toBER();
  return Buffer.from(der);
}

/** `der` in PEM, 64 columns, under `label` (`CERTIFICATE`). */
export function pemOf(label: string, der: Buffer): string {
  const body = der.toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}
