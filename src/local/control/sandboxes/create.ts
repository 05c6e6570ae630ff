/**
 * Creating a sandbox: its template resolved, a warm-pool member claimed or a
 * runtime sandbox started, the agent initialised, the record made.
 *
 * @module
 */
import type { RuntimeSandbox } from "../../runtime/types";
import type { SandboxLifecycle } from "./runtime-lifecycle";
import { serviceError } from "../http";
import { bootSandbox } from "./boot";
import { newSandboxID } from "./ids";
import { appendLog } from "./logs";
import type { TemplateRegistry } from "../templates/lookup";
import type { CreateSandboxInput } from "./create-input";
import { newSandboxRecord } from "./initial-record";
import type { SandboxRecord } from "./record";
import type { WarmPool } from "./warm-pool";
import { warmSpec } from "./warm-up";
import { initSettingsOf, type PreInits } from "./pre-init";

/** What {@link startSandbox} needs of the manager. */
export interface CreateContext {
  /** Starts a sandbox the pool had none for, and destroys one that failed or was given back. */
  runtime: SandboxLifecycle;
  templates: TemplateRegistry;
  pool: WarmPool;
  /** What the pool's members were sent as their `/init`, and the recipes for it. */
  preInits: PreInits;
  /** The access token of a secure sandbox. */
  tokenOf(record: SandboxRecord): string | undefined;
}

/**
 * Starts the sandbox `input` asks for, all-or-nothing: on failure its
 * writable layer is destroyed. The record is `running`, its end set from
 * `input.timeoutSec` once the start is done.
 */
export async function startSandbox(
  ctx: CreateContext,
  input: CreateSandboxInput,
): Promise<{ record: SandboxRecord; processes: RuntimeSandbox; phases: string }> {
  const t0 = performance.now();
  const template = ctx.templates.resolve(input.template);
  if (!template) throw serviceError("not_found", `template '${input.template}' not found`);
  // Warm sandboxes started without mounts; a sandbox with volumes starts its own.
  // With none ready, a start of the pool's already under way is nearer than a new one.
  const spec = warmSpec(template, input.allowInternetAccess);
  const pooled = !input.volumeMounts?.length;
  let started = pooled ? await ctx.pool.claimSoon(spec) : undefined;
  if (started && ctx.preInits.sentForOther(started, template.templateID)) {
    // Its agent was sent another template of the same layers' variables (pre-init.ts): a start of its own.
    await ctx.runtime.destroy(started.sandboxID).catch(() => undefined);
    started = undefined;
  }
  const claimed = performance.now();
  const sandboxID = started?.sandboxID ?? newSandboxID();
  const record = newSandboxRecord(sandboxID, template, input, Date.now());
  let processes: RuntimeSandbox;
  try {
    processes = await bootSandbox(record, {
      runtime: ctx.runtime,
      token: ctx.tokenOf(record),
      readyCmd: template.readyCmd,
      started,
      preInit: started && ctx.preInits.take(started),
    });
  } catch (err) {
    await ctx.runtime.destroy(sandboxID).catch(() => undefined);
    throw err;
  }
  // The key's next members get this create's /init during their warm-up; never a create's own variables.
  if (pooled) {
    const ownVariables = Object.keys(input.envVars).length > 0;
    ctx.preInits.remember(
      spec,
      template.templateID,
      ownVariables
        ? undefined
        : (id) => {
            const like = newSandboxRecord(id, template, input, Date.now());
            return initSettingsOf(like, ctx.tokenOf(like));
          },
    );
  }
  record.endAt = new Date(Date.now() + input.timeoutSec * 1000).toISOString();
  appendLog(record, "info", "sandbox created", { templateID: template.templateID });
  ctx.templates.markSpawned(template.templateID);
  const phases = `claim ${(claimed - t0).toFixed(0)} ms (${started ? "warm" : "none"}), boot ${(performance.now() - claimed).toFixed(0)} ms`;
  return { record, processes, phases };
}
