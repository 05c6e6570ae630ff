/**
 * Unknown keys inside nested attributes, read from the configuration as the
 * user wrote it. Terraform converts `commands = [{ run = "x", timeout_secs = 30 }]`
 * to the attribute's object type before the provider sees it, and that
 * conversion drops attributes the type does not have (hashicorp/terraform#33570):
 * the typo never reaches `ValidateResourceConfig`. So the provider reads the
 * module's `.tf` files (with HashiCorp's own HCL parser, `@cdktf/hcl2json`)
 * and `.tf.json` files, finds the blocks of the type being validated whose
 * literal values agree with the configuration it received, and refuses their
 * unknown keys with the path and the nearest known key in Terraform's names.
 * Values written as expressions (`[for ...]`, `var.x`) are not walked.
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import * as path from "node:path";
import { setFlagsFromString } from "node:v8";
import { create } from "@bufbuild/protobuf";
import {
  type AttributePath,
  AttributePathSchema,
  AttributePath_StepSchema,
  type Diagnostic,
} from "../../gen/terraform/tfplugin6_pb";
import { type PathStep, type UnknownKey, unknownKeysIn } from "../../resources/core/unknown-keys";
import { type TfBlock, inputAttributes } from "../schema/model";
import { namedShape, terraformName } from "../schema/naming";
import { dynamicToPlain } from "../values/dynamic-attribute";
import { type TfValue, isUnknown } from "../values/dynamic-value";
import { errorDiagnostic } from "./diagnostics";

/** HashiCorp's HCL parser, compiled to WebAssembly. */
const HCL_PARSER = "@cdktf/hcl2json";

/** One `resource` or `data` block as written: its address and body. */
interface SourceBlock {
  readonly address: string;
  readonly body: Record<string, unknown>;
}

/** Blocks by `resource.<type>` / `data.<type>`. */
type SourceBlocks = Map<string, SourceBlock[]>;

/** An HCL expression the parser kept as text: not a literal, not walked. */
function isExpression(value: unknown): boolean {
  return typeof value === "string" && (value.includes("${") || value.includes("%{"));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The module directories of the configuration: the root and every installed module. */
async function moduleDirs(root: string): Promise<string[]> {
  const dirs = [root];
  try {
    const manifest = JSON.parse(
      await readFile(path.join(root, ".terraform", "modules", "modules.json"), "utf8"),
    ) as { Modules?: Array<{ Dir?: string }> };
    for (const m of manifest.Modules ?? []) {
      if (m.Dir) dirs.push(path.resolve(root, m.Dir));
    }
  } catch {
    // No modules installed: the root alone.
  }
  return [...new Set(dirs)];
}

/**
 * Keeps WebAssembly to V8's baseline compiler (Liftoff). By default V8 also
 * recompiles the parser's large Go module with TurboFan on background
 * threads, and a process that exits waits for them: after a validate, the
 * provider took 0.6-1.1 s to exit at load 6 (measured with strace: the main
 * thread joining V8's workers), and go-plugin gives a provider 2 s after
 * `Shutdown` before it logs "plugin failed to exit gracefully" and kills it.
 * With Liftoff only, the exit takes tens of milliseconds and a parse is no
 * slower. The flag is set only here, after the handshake and the code cache
 * (main.ts), so it never changes the flags the cache is checked against.
 */
function compileWasmOnce(): void {
  setFlagsFromString("--liftoff-only");
}

/** The top-level structure of one file, as JSON (HCL through HashiCorp's parser). */
async function parseFile(file: string): Promise<Record<string, unknown> | undefined> {
  const text = await readFile(file, "utf8");
  if (file.endsWith(".tf.json")) return JSON.parse(text) as Record<string, unknown>;
  // Loaded only when a configuration is validated: it is a WebAssembly build
  // of HCL, too heavy for the provider's start. Its typings pull in the DOM
  // library, so the module is named by a variable and typed here.
  compileWasmOnce();
  const { parse } = (await import(HCL_PARSER)) as {
    parse: (filename: string, contents: string) => Promise<Record<string, unknown>>;
  };
  return await parse(path.basename(file), text);
}

function collect(into: SourceBlocks, mode: "resource" | "data", section: unknown): void {
  if (!isRecord(section)) return;
  for (const [type, byName] of Object.entries(section)) {
    if (!isRecord(byName)) continue;
    for (const [name, bodies] of Object.entries(byName)) {
      for (const body of Array.isArray(bodies) ? bodies : [bodies]) {
        if (!isRecord(body)) continue;
        const key = `${mode}.${type}`;
        const address = mode === "data" ? `data.${type}.${name}` : `${type}.${name}`;
        into.set(key, [...(into.get(key) ?? []), { address, body }]);
      }
    }
  }
}

/** Every resource and data block of the configuration in `root`. */
async function readBlocks(root: string): Promise<SourceBlocks> {
  const blocks: SourceBlocks = new Map();
  for (const dir of await moduleDirs(root)) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith(".tf") || n.endsWith(".tf.json")).sort()) {
      try {
        const parsed = await parseFile(path.join(dir, name));
        for (const sections of Array.isArray(parsed) ? parsed : [parsed]) {
          if (!isRecord(sections)) continue;
          collect(blocks, "resource", sections.resource);
          collect(blocks, "data", sections.data);
        }
      } catch {
        // A file terraform cannot parse either: terraform reports it.
      }
    }
  }
  return blocks;
}

const cache = new Map<string, Promise<SourceBlocks>>();

/** The blocks of `root`, read once per provider process. */
function blocksOf(root: string): Promise<SourceBlocks> {
  let found = cache.get(root);
  if (!found) {
    found = readBlocks(root);
    cache.set(root, found);
  }
  return found;
}

/**
 * True when every literal in `written` agrees with `received` (the value
 * terraform sent), so the block is one that produced this configuration.
 * Expressions and values unknown at validation agree with anything; an
 * attribute left out must be null; keys the schema does not have are not in
 * `received` and are skipped.
 */
function agrees(written: unknown, wireValue: TfValue | undefined): boolean {
  // A dynamic attribute (a Provisioner command's `run`) arrives with its type.
  const received = wireValue === undefined ? undefined : dynamicToPlain(wireValue);
  if (isExpression(written) || (received !== undefined && isUnknown(received))) return true;
  if (written === null || written === undefined) return received === null || received === undefined;
  if (Array.isArray(written)) {
    return (
      Array.isArray(received) &&
      received.length === written.length &&
      written.every((w, i) => agrees(w, received[i]))
    );
  }
  if (isRecord(written)) {
    if (!isRecord(received)) return false;
    return Object.entries(received as Record<string, TfValue>).every(([k, v]) =>
      agrees(written[k], v),
    );
  }
  // Scalars: terraform may have converted a number to a string attribute's type.
  const scalar = (v: unknown) =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : v;
  return scalar(written) === scalar(received);
}

/** The attribute path of the object holding an unknown key (the key itself is not in the schema). */
function parentPath(steps: readonly PathStep[]): AttributePath {
  return create(AttributePathSchema, {
    steps: steps.slice(0, -1).map((s) =>
      create(AttributePath_StepSchema, {
        selector:
          s.kind === "key"
            ? { case: "attributeName", value: s.name }
            : s.kind === "index"
              ? { case: "elementKeyInt", value: BigInt(s.index) }
              : { case: "elementKeyString", value: s.key },
      }),
    ),
  });
}

/**
 * The blocks of `typeName` in the configuration at `root` that may have
 * produced `config`: their address, and their attributes of the schema as
 * written (an expression is its text, e.g. `${sandboxiac_template.app.ref}`).
 */
export async function agreeingBlocks(
  mode: "resource" | "data",
  typeName: string,
  block: TfBlock,
  config: Record<string, TfValue>,
  root: string,
): Promise<Array<{ address: string; written: Record<string, unknown> }>> {
  const candidates = (await blocksOf(root)).get(`${mode}.${typeName}`) ?? [];
  const attributes = inputAttributes(block);
  const out = [];
  for (const { address, body } of candidates) {
    const written = Object.fromEntries(
      Object.entries(body).filter(([k]) => attributes.some((a) => a.name === k)),
    );
    if (agrees(written, config)) out.push({ address, written });
  }
  return out;
}

/**
 * Diagnostics for the unknown keys nested in the blocks of `typeName`
 * (`resource` or `data`) in the configuration at `root` that produced
 * `config`. Top-level unknown arguments are left to terraform, which
 * refuses them itself.
 */
export async function sourceKeyDiagnostics(
  mode: "resource" | "data",
  typeName: string,
  block: TfBlock,
  config: Record<string, TfValue> | null,
  root: string,
): Promise<Diagnostic[]> {
  if (config === null) return [];
  const attributes = inputAttributes(block);
  const shape = namedShape(attributes, terraformName);
  const found = new Map<string, UnknownKey>();
  for (const { written } of await agreeingBlocks(mode, typeName, block, config, root)) {
    for (const key of unknownKeysIn(shape, written, { isLate: isExpression }))
      found.set(`${key.path}\n${key.reason}`, key);
  }
  return [...found.values()].map((key) =>
    errorDiagnostic(
      `Unsupported argument ${key.path}`,
      `${key.path}: ${key.reason}`,
      parentPath(key.steps),
    ),
  );
}
