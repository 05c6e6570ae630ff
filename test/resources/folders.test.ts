/**
 * Every resource folder looks alike and stands alone: the same files named
 * after the resource, strict inputs at every level, and no import from
 * another resource's folder (shared things live in src/resources/core or
 * src/wire).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ZodType } from "zod";
import { allDescriptors } from "../../src/resources/registry";

const RESOURCES = path.resolve(__dirname, "..", "..", "src", "resources");
const resourceDirs = fs
  .readdirSync(RESOURCES, { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== "core" && e.name !== "data")
  .map((e) => path.join(RESOURCES, e.name));
const dataDirs = fs
  .readdirSync(path.join(RESOURCES, "data"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => path.join(RESOURCES, "data", e.name));

/** Every object schema below `schema` that lets unknown keys through, by path. */
function lenientObjects(schema: ZodType, at: string): string[] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  const inner = (def.innerType ?? def.in ?? def.element ?? def.valueType) as ZodType | undefined;
  if (def.type === "object") {
    const catchall = def.catchall as ZodType | undefined;
    const strict =
      catchall !== undefined &&
      (catchall as unknown as { _zod: { def: { type: string } } })._zod.def.type === "never";
    const shape = def.shape as Record<string, ZodType>;
    return [
      ...(strict ? [] : [at || "(root)"]),
      ...Object.entries(shape).flatMap(([k, v]) => lenientObjects(v, at ? `${at}.${k}` : k)),
    ];
  }
  if (def.type === "union") return (def.options as ZodType[]).flatMap((o) => lenientObjects(o, at));
  return inner ? lenientObjects(inner, at) : [];
}

describe("resource folders", () => {
  it.each(resourceDirs.map((d) => [path.basename(d), d]))(
    "%s holds index, args, descriptor, lifecycle, docs and tests named after it",
    (name, dir) => {
      const files = fs.readdirSync(dir);
      for (const suffix of ["args.ts", "descriptor.ts", "lifecycle.ts", "md", "test.ts"])
        expect(files).toContain(`${name}.${suffix}`);
      expect(files).toContain("index.ts");
    },
  );

  it.each(dataDirs.map((d) => [path.basename(d), d]))(
    "data source %s holds index, args, descriptor, read and docs named after it",
    (name, dir) => {
      const files = fs.readdirSync(dir);
      for (const suffix of ["args.ts", "descriptor.ts", "read.ts", "md"])
        expect(files).toContain(`${name}.${suffix}`);
      expect(files).toContain("index.ts");
    },
  );

  it.each([...resourceDirs, ...dataDirs].map((d) => [path.relative(RESOURCES, d), d]))(
    "%s imports nothing from another resource's folder",
    (_name, dir) => {
      const crossing: string[] = [];
      for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
        const text = fs.readFileSync(path.join(dir, file), "utf8");
        for (const [, spec] of text.matchAll(/from "(\.[^"]+)"/g)) {
          const target = path.resolve(dir, spec);
          const inResources = target.startsWith(`${RESOURCES}${path.sep}`);
          const shared =
            target.startsWith(path.join(RESOURCES, "core")) ||
            target.startsWith(`${dir}${path.sep}`);
          if (inResources && !shared) crossing.push(`${file} -> ${spec}`);
        }
      }
      expect(crossing).toEqual([]);
    },
  );

  it.each(allDescriptors.map((d) => [d.typeName, d]))(
    "%s's inputs are strict objects at every level",
    (_name, descriptor) => {
      expect(lenientObjects(descriptor.args, "")).toEqual([]);
    },
  );
});
