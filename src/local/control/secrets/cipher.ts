/**
 * Encryption at rest of secret values: AES-256-GCM under a key kept in
 * `<dataDir>/secrets.key` (mode 0600), a fresh 96-bit nonce per value, and
 * the secret's id and version as additional data so a ciphertext cannot be
 * moved to another secret or version.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { loadOrCreateSecret } from "../tokens";

/** File in the data dir holding the secret-store key (hex, mode 0600). */
const SECRETS_KEY_FILE = "secrets.key";

/** One encrypted value, base64 fields. */
export interface SealedValue {
  iv: string;
  tag: string;
  data: string;
}

/** Seals and opens secret values. */
export class SecretCipher {
  private constructor(private readonly key: Buffer) {}

  /** Loads the key of `dataDir`, creating it on first use. */
  static async open(dataDir: string): Promise<SecretCipher> {
    const hex = await loadOrCreateSecret(dataDir, SECRETS_KEY_FILE, () =>
      randomBytes(32).toString("hex"),
    );
    const key = Buffer.from(hex, "hex");
    if (key.length !== 32)
      throw new Error(
        `${SECRETS_KEY_FILE} in the data dir is not a 32-byte hex key; restore it from a backup (secrets cannot be decrypted without it)`,
      );
    return new SecretCipher(key);
  }

  /** Encrypts `value`, bound to `aad`. */
  seal(value: string, aad: string): SealedValue {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return {
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      data: data.toString("base64"),
    };
  }

  /** Decrypts a value sealed with the same `aad`; throws when it was tampered with. */
  unseal(sealed: SealedValue, aad: string): string {
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([
      decipher.update(Buffer.from(sealed.data, "base64")),
      decipher.final(),
    ]).toString("utf8");
  }
}
