/**
 * The check a Dockerfile passes before anything is built from it, the
 * official SDK's two refusals (one FROM, no multi-stage), with the same
 * parser (`dockerfile-ast`). The inputs check (template.build-args.ts) and the
 * conversion into steps (template.dockerfile.ts) both use it.
 *
 * @module
 */
import { DockerfileParser } from "dockerfile-ast";

/** Why `content` cannot be built (the SDK's two refusals), or undefined. */
export function dockerfileProblem(content: string): string | undefined {
  const froms = DockerfileParser.parse(content)
    .getInstructions()
    .filter((i) => i.getKeyword() === "FROM").length;
  if (froms > 1)
    return `is a multi-stage Dockerfile (${froms} FROM instructions), which E2B templates do not support: keep one FROM, or build the image elsewhere and use fromImage`;
  if (froms === 0) return "has no FROM instruction: start it with FROM <image>";
  return undefined;
}
