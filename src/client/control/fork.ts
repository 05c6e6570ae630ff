/**
 * Forks: `POST /sandboxes/{sandboxID}/fork` checkpoints a sandbox and starts
 * `count` sandboxes from it, each reported on its own.
 *
 * @module
 */
import { z } from "zod";
import { checkSandboxID } from "./args";
import { type CallContext, type CallOptions, callSpec, invoke } from "./call";
import { SandboxSchema } from "./sandbox.schemas";
import type { Schemas } from "./types";
import { parseArgs } from "./validate";

/** One fork: exactly one of `sandbox` (started) and `error` (why it did not start). */
export type ForkResult = Schemas["SandboxForkResult"];

/** The fork body. */
export interface ForkBody {
  /**
   * Each fork's lifetime in seconds (greater than 0).
   * @default 15 (the API's default)
   */
  timeout?: number | undefined;
  /**
   * How many forks, 1..100.
   * @default 1
   */
  count?: number | undefined;
}

const ForkArgs = z.object({
  timeout: z.number().int().min(1).max(2_147_483_647).optional(),
  count: z.number().int().min(1).max(100).optional(),
});

const ForkResultSchema: z.ZodType<ForkResult> = z.looseObject({
  sandbox: SandboxSchema.exactOptional(),
  error: z.looseObject({ code: z.number().int(), message: z.string() }).exactOptional(),
});

/** Fork methods of the control client. */
export interface ForkMethods {
  /**
   * `POST /sandboxes/{sandboxID}/fork` (201): one result per fork; a fork that
   * failed to start is an `error` entry, not a thrown error. Never retried.
   */
  forkSandbox(sandboxID: string, body?: ForkBody, options?: CallOptions): Promise<ForkResult[]>;
}

/** Builds the {@link ForkMethods} over `ctx`. */
export function forkMethods(ctx: CallContext): ForkMethods {
  return {
    async forkSandbox(sandboxID, body, options) {
      const id = checkSandboxID("sandboxes.fork", sandboxID);
      const parsed = parseArgs(ForkArgs, body ?? {}, "sandboxes.fork");
      const spec = callSpec("sandboxes.fork", [201], z.array(ForkResultSchema), id);
      const { data } = await invoke(ctx, spec, options, (init) =>
        ctx.api.POST("/sandboxes/{sandboxID}/fork", {
          params: { path: { sandboxID: id } },
          body: parsed,
          ...init,
        }),
      );
      return data;
    },
  };
}
