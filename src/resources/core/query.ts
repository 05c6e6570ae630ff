/**
 * Running a data source's query with its arguments checked first, for
 * adapters that have no validation step of their own (the Pulumi functions).
 *
 * @module
 */
import type { ZodType } from "zod";
import { SandboxIacError } from "../../errors";
import { checkWithSchema } from "./check";
import type { DataSourceDescriptor } from "./descriptor";
import type { ResourceContext } from "./lifecycle";

/**
 * Checks `args` against the data source's schema and runs its query. Bad
 * arguments fail with `invalid_argument` listing every failure with its path,
 * before any call to the service.
 */
export async function queryDataSource<A, R extends object>(
  descriptor: DataSourceDescriptor<A, R>,
  args: unknown,
  ctx: ResourceContext,
): Promise<R> {
  const checked = checkWithSchema(descriptor.args as unknown as ZodType<A>, args);
  if (checked.inputs === undefined) {
    const problems = checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
    throw new SandboxIacError(
      "invalid_argument",
      `the arguments of data source ${descriptor.typeName} are wrong: ${problems}: fix them and run again`,
      { operation: `data.${descriptor.typeName}`, field: checked.failures[0]?.property },
    );
  }
  return descriptor.read(checked.inputs, ctx);
}
