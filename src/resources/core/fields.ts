/**
 * Input fields several resources share, their grammar taken from src/wire.
 *
 * @module
 */
import { z } from "zod";
import { SANDBOX_ID_PATH_ALLOWED, SANDBOX_ID_PATH_PATTERN } from "../../wire/ids";
import { tagProblem, templateNameProblem } from "../../wire/template-names";
import { refTarget } from "./refs";

/**
 * A sandbox ID as the control API takes it: what the service issued, or the
 * legacy `<sandboxID>-<clientID>` (the service uses the part before the `-`).
 */
export const sandboxIDSchema = z
  .string({ error: "must be a sandbox ID string" })
  .regex(SANDBOX_ID_PATH_PATTERN, { error: `must be ${SANDBOX_ID_PATH_ALLOWED}` });

/**
 * A sandbox ID, or a reference to one sandbox's state (a Provisioner's
 * `keptSandboxRef`, `<sandboxID>@<run>`; see `refs.ts`): the ID part is
 * checked like {@link sandboxIDSchema}.
 */
export const sandboxRefSchema = z
  .string({ error: "must be a sandbox ID string" })
  .refine((value) => SANDBOX_ID_PATH_PATTERN.test(refTarget(value)), {
    error: `must be ${SANDBOX_ID_PATH_ALLOWED}, or a Provisioner's keptSandboxRef (<sandboxID>@<run>)`,
  });

/**
 * A template name `[namespace/]alias[:tag]`, checked in the normalised form
 * the service uses and left as written (`" My-App "` is valid and stays so).
 * A failure gives `example` as a valid name.
 */
export function templateNameSchema(example: string) {
  return z
    .string({ error: "must be a string [namespace/]alias[:tag]" })
    .superRefine((name, ctx) => {
      const problem = templateNameProblem(name);
      if (problem)
        ctx.addIssue({ code: "custom", message: `${problem}: e.g. ${JSON.stringify(example)}` });
    });
}

/** A template tag, checked in its normalised form and left as written. */
export const tagSchema = z.string({ error: "must be a string" }).superRefine((tag, ctx) => {
  const problem = tagProblem(tag);
  if (problem) ctx.addIssue({ code: "custom", message: `${problem}: e.g. "v1" or "latest"` });
});
