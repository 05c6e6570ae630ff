/**
 * The secret store of the local service: metadata in clear, each value
 * sealed with {@link SecretCipher}, all in `<dataDir>/secrets.json` written
 * atomically (a `kill -9` leaves the old or the new file). Values are never
 * returned by any read: only {@link SecretStore.reveal} opens one, for the
 * service's own use.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import { z } from "zod";
import { serviceError } from "../http";
import { JsonStateWriter, readStateFile } from "../state-file";
import { SecretCipher } from "./cipher";
import {
  NAME_MAX_LENGTH as SECRET_NAME_MAX,
  SECRET_ID_PREFIX,
  SECRET_NAME_PATTERN,
} from "../../../wire/ids";

const METADATA_MAX_ENTRIES = 32;
const METADATA_KEY_MAX_BYTES = 128;
const METADATA_VALUE_MAX_BYTES = 1024;
const METADATA_MAX_BYTES = 8192;

const sealedSchema = z.object({ iv: z.string(), tag: z.string(), data: z.string() });
const recordSchema = z.object({
  secretID: z.string(),
  name: z.string(),
  currentVersion: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  value: sealedSchema,
});
const fileSchema = z.object({ secrets: z.array(recordSchema) });

type SecretRecord = z.infer<typeof recordSchema>;

/** The wire `Secret`: metadata only. */
export interface SecretView {
  secretID: string;
  name: string;
  currentVersion: number;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** The secrets of one data dir. */
export class SecretStore {
  private readonly secrets = new Map<string, SecretRecord>();
  private readonly writer: JsonStateWriter;

  private constructor(
    file: string,
    private readonly cipher: SecretCipher,
  ) {
    this.writer = new JsonStateWriter(file, () => ({ secrets: [...this.secrets.values()] }));
  }

  /** Loads the secrets of `dataDir`. */
  static async open(dataDir: string): Promise<SecretStore> {
    const file = path.join(dataDir, "secrets.json");
    const store = new SecretStore(file, await SecretCipher.open(dataDir));
    const saved = await readStateFile(file, fileSchema);
    for (const s of saved?.secrets ?? []) store.secrets.set(s.secretID, s);
    return store;
  }

  /** Every secret, oldest first. */
  list(): SecretView[] {
    return [...this.secrets.values()]
      .sort(
        (a, b) => a.createdAt.localeCompare(b.createdAt) || a.secretID.localeCompare(b.secretID),
      )
      .map(view);
  }

  /** The secret with this id or (case-insensitive) name; 404 when there is none. */
  get(idOrName: string): SecretView {
    return view(this.find(idOrName));
  }

  /** Creates a secret; 400 for bad input, 409 when the name is taken. */
  async create(body: unknown): Promise<SecretView> {
    const obj = objectBody(body);
    const name = secretName(obj.name);
    const value = secretValue(obj.value);
    const metadata = secretMetadata(obj.metadata);
    if ([...this.secrets.values()].some((s) => s.name === name))
      throw serviceError(
        "conflict",
        `a secret named '${name}' already exists: update it (POST /secrets/${name}) or pick another name`,
      );
    const now = new Date().toISOString();
    const secretID = `${SECRET_ID_PREFIX}${randomBytes(12).toString("hex")}`;
    const record: SecretRecord = {
      secretID,
      name,
      currentVersion: 1,
      metadata: metadata ?? {},
      createdAt: now,
      updatedAt: now,
      value: this.cipher.seal(value, aadOf(secretID, 1)),
    };
    this.secrets.set(secretID, record);
    await this.writer.flush();
    return view(record);
  }

  /** Stores a new version of a secret's value (and metadata when given). */
  async update(idOrName: string, body: unknown): Promise<SecretView> {
    const record = this.find(idOrName);
    const obj = objectBody(body);
    const value = secretValue(obj.value);
    const metadata = secretMetadata(obj.metadata);
    const version = record.currentVersion + 1;
    const next: SecretRecord = {
      ...record,
      currentVersion: version,
      metadata: metadata ?? record.metadata,
      updatedAt: new Date().toISOString(),
      value: this.cipher.seal(value, aadOf(record.secretID, version)),
    };
    this.secrets.set(record.secretID, next);
    await this.writer.flush();
    return view(next);
  }

  /** Deletes a secret; 404 when there is none. */
  async delete(idOrName: string): Promise<void> {
    const record = this.find(idOrName);
    this.secrets.delete(record.secretID);
    await this.writer.flush();
  }

  /** The current value of a secret, for the service's own use; never sent to a client. */
  reveal(idOrName: string): string {
    const r = this.find(idOrName);
    return this.cipher.unseal(r.value, aadOf(r.secretID, r.currentVersion));
  }

  /**
   * The current value of the secret named `name` (names are stored
   * lower-cased), for the egress edge's `${e2b.secrets.NAME}`; undefined
   * when there is none. Never sent to a client.
   */
  valueByName(name: string): string | undefined {
    const lower = name.toLowerCase();
    const r = [...this.secrets.values()].find((s) => s.name === lower);
    return r && this.cipher.unseal(r.value, aadOf(r.secretID, r.currentVersion));
  }

  private find(idOrName: string): SecretRecord {
    const byId = this.secrets.get(idOrName);
    if (byId) return byId;
    const lower = idOrName.toLowerCase();
    const byName = [...this.secrets.values()].find((s) => s.name === lower);
    if (byName) return byName;
    throw serviceError("not_found", `secret '${idOrName.slice(0, 140)}' not found`);
  }
}

function view(r: SecretRecord): SecretView {
  return {
    secretID: r.secretID,
    name: r.name,
    currentVersion: r.currentVersion,
    metadata: r.metadata,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function aadOf(secretID: string, version: number): string {
  return `${secretID}/${version}`;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw serviceError(
      "invalid_argument",
      'body: expected a JSON object like {"name": "api-key", "value": "..."}',
    );
  return body as Record<string, unknown>;
}

/** The canonical (lower-case) name; 400 naming what is allowed. */
function secretName(name: unknown): string {
  if (
    typeof name !== "string" ||
    name.length === 0 ||
    name.length > SECRET_NAME_MAX ||
    !SECRET_NAME_PATTERN.test(name)
  )
    throw serviceError(
      "invalid_argument",
      `body.name: a secret name is 1 to ${SECRET_NAME_MAX} characters of letters, digits, '_' and '-', got ${JSON.stringify(name)?.slice(0, 80) ?? "nothing"}`,
    );
  const lower = name.toLowerCase();
  if (lower.startsWith(SECRET_ID_PREFIX))
    throw serviceError(
      "invalid_argument",
      `body.name: the '${SECRET_ID_PREFIX}' prefix is reserved for secret ids, got ${JSON.stringify(name)}; pick a name without it`,
    );
  return lower;
}

/** The value; the message never repeats what was received. */
function secretValue(value: unknown): string {
  if (typeof value !== "string")
    throw serviceError(
      "invalid_argument",
      `body.value: required, a string (got a${value === undefined ? " missing value" : `n ${typeof value}`})`,
    );
  return value;
}

function secretMetadata(metadata: unknown): Record<string, string> | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (typeof metadata !== "object" || Array.isArray(metadata))
    throw serviceError("invalid_argument", "body.metadata: expected an object of string values");
  const entries = Object.entries(metadata as Record<string, unknown>);
  if (entries.length > METADATA_MAX_ENTRIES)
    throw serviceError(
      "invalid_argument",
      `body.metadata: at most ${METADATA_MAX_ENTRIES} entries, got ${entries.length}`,
    );
  let total = 0;
  for (const [k, v] of entries) {
    if (typeof v !== "string")
      throw serviceError(
        "invalid_argument",
        `body.metadata.${k}: expected a string, got ${typeof v}`,
      );
    const kb = Buffer.byteLength(k);
    const vb = Buffer.byteLength(v);
    if (kb > METADATA_KEY_MAX_BYTES)
      throw serviceError(
        "invalid_argument",
        `body.metadata: key '${k.slice(0, 40)}...' is longer than ${METADATA_KEY_MAX_BYTES} bytes`,
      );
    if (vb > METADATA_VALUE_MAX_BYTES)
      throw serviceError(
        "invalid_argument",
        `body.metadata.${k}: longer than ${METADATA_VALUE_MAX_BYTES} bytes`,
      );
    total += kb + vb;
  }
  if (total > METADATA_MAX_BYTES)
    throw serviceError(
      "invalid_argument",
      `body.metadata: more than ${METADATA_MAX_BYTES} bytes in total`,
    );
  return Object.fromEntries(entries) as Record<string, string>;
}
