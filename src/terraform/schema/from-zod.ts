/**
 * Terraform attributes from the core's zod schemas. Types, optionality and
 * descriptions are read from the schema itself (zod's definitions and
 * `.meta()`), never restated: a field added to a descriptor appears in the
 * provider schema as it is.
 *
 * @module
 */
import type { ZodObject, ZodType } from "zod";
import { SandboxIacError } from "../../errors";
import type { TfAttribute, TfType } from "./model";
import { snakeCase } from "./names";

/** How the attributes of one zod object are published. */
export interface AttributeRole {
  /** `input`: written by the user (required unless optional); `output`: computed only. */
  role: "input" | "output";
  /**
   * Core names of fields that are secrets: top-level names, or dotted paths to
   * nested attributes (`build.fromImageRegistry.password`), published as
   * sensitive nested attributes.
   */
  sensitive?: readonly string[];
  /** Core names of top-level inputs the service fills when left out (optional + computed). */
  computedWhenOmitted?: readonly string[];
}

interface Unwrapped {
  inner: ZodType;
  optional: boolean;
  description: string;
  /** The field's metadata asks for the list form of a `string | string[]` union. */
  listForm: boolean;
}

/** The zod definition, typed loosely: zod's def types differ per schema kind. */
interface Def {
  type: string;
  innerType?: ZodType;
  in?: ZodType;
  element?: ZodType;
  valueType?: ZodType;
  keyType?: ZodType;
  options?: ZodType[];
  shape?: Record<string, ZodType>;
  values?: unknown[];
}

function defOf(schema: ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

function metaOf(schema: ZodType): { description?: unknown; terraformListForm?: unknown } {
  return (schema.meta() as { description?: unknown } | undefined) ?? {};
}

/** Peels optional/nullable/default/readonly/pipe wrappers, keeping the outermost description. */
function unwrap(schema: ZodType): Unwrapped {
  let current = schema;
  let optional = false;
  let description: string | undefined;
  let listForm = false;
  for (;;) {
    const meta = metaOf(current);
    if (typeof meta.description === "string") description ??= meta.description;
    if (meta.terraformListForm === true) listForm = true;
    const def = defOf(current);
    if (def.type === "optional" || def.type === "default" || def.type === "prefault") {
      optional = true;
      current = def.innerType!;
    } else if (def.type === "nullable") {
      // null is Terraform's "not set": a nullable field may be left out.
      optional = true;
      current = def.innerType!;
    } else if (def.type === "readonly" || def.type === "nonoptional" || def.type === "catch") {
      current = def.innerType!;
    } else if (def.type === "pipe") {
      current = def.in!;
    } else {
      return { inner: current, optional, description: description ?? "", listForm };
    }
  }
}

function unsupported(path: string, what: string): never {
  throw new SandboxIacError(
    "unsupported",
    `field ${path} is ${what}, which Terraform cannot express here; allowed are strings, numbers, ` +
      "booleans, lists, string-keyed maps, objects and string | string[] (dynamic): change the descriptor's schema",
    { operation: "terraform.schema", field: path },
  );
}

/** The Terraform type of a (possibly wrapped) zod schema. */
function typeOf(
  schema: ZodType,
  path: string,
  role: AttributeRole,
): { type: TfType; stringOrList?: true } {
  const { inner, listForm } = unwrap(schema);
  const def = defOf(inner);
  switch (def.type) {
    case "string":
    case "enum":
    case "template_literal":
      return { type: { kind: "string" } };
    case "literal":
      return (def.values ?? []).every((v) => typeof v === "string")
        ? { type: { kind: "string" } }
        : unsupported(path, "a non-string literal");
    case "number":
    case "int":
      return { type: { kind: "number" } };
    case "boolean":
      return { type: { kind: "bool" } };
    case "array":
      return { type: { kind: "list", element: typeOf(def.element!, `${path}[]`, role).type } };
    case "record":
      return { type: { kind: "map", element: typeOf(def.valueType!, `${path}{}`, role).type } };
    case "object":
      return {
        type: {
          kind: "object",
          attributes: attributesOf(
            inner as ZodObject,
            { role: role.role, ...(role.sensitive ? { sensitive: role.sensitive } : {}) },
            path,
          ),
        },
      };
    case "union": {
      const kinds = (def.options ?? []).map((o) => typeOf(o, path, role).type);
      if (kinds.every((k) => k.kind === "string" || k.kind === "number")) {
        // e.g. a file mode given as 0o755 or "0755": the string form carries both.
        return kinds.some((k) => k.kind === "string")
          ? { type: { kind: "string" } }
          : { type: { kind: "number" } };
      }
      const isStringList = (k: TfType) => k.kind === "list" && k.element.kind === "string";
      if (
        kinds.length === 2 &&
        kinds.some((k) => k.kind === "string") &&
        kinds.some((k) => isStringList(k))
      ) {
        // Either form as written (a dynamic attribute, its types checked by the
        // core's schema), unless the field asks for the list form: in a list of
        // objects, terraform refuses a dynamic attribute's list next to elements
        // without it ("element types must all match for conversion to list").
        return listForm
          ? { type: { kind: "list", element: { kind: "string" } }, stringOrList: true }
          : { type: { kind: "dynamic" } };
      }
      return unsupported(path, `a union of ${kinds.map((k) => k.kind).join(" | ")}`);
    }
    default:
      return unsupported(path, def.type);
  }
}

/**
 * The attributes of a zod object. Inputs are required unless optional;
 * outputs are computed. Nested objects inherit the role (everything inside a
 * computed attribute is computed).
 */
export function attributesOf(schema: ZodObject, role: AttributeRole, path = ""): TfAttribute[] {
  const shape = (schema as unknown as { shape: Record<string, ZodType> }).shape;
  return Object.entries(shape).map(([coreName, field]) => {
    const fieldPath = path ? `${path}.${coreName}` : coreName;
    const { optional, description } = unwrap(field);
    const { type, stringOrList } = typeOf(field, fieldPath, role);
    const output = role.role === "output";
    const topLevel = path === "";
    const computedWhenOmitted =
      topLevel && optional && (role.computedWhenOmitted ?? []).includes(coreName);
    return {
      name: snakeCase(coreName),
      coreName,
      type,
      description,
      required: !output && !optional,
      optional: !output && optional,
      computed: output || computedWhenOmitted,
      sensitive: (role.sensitive ?? []).includes(fieldPath),
      ...(stringOrList ? { stringOrList } : {}),
    };
  });
}
