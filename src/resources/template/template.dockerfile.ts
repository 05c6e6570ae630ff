/**
 * A Dockerfile turned into a build exactly as the official SDK's
 * `fromDockerfile` does it (its `dockerfileParser.ts`), with the same parser
 * (`dockerfile-ast`): FROM is the image; the steps start with `USER root` and
 * `WORKDIR /`; RUN, COPY/ADD (one COPY per source, `--chown` as the user),
 * ENV/ARG, WORKDIR and USER follow in order; CMD/ENTRYPOINT is the start
 * command with a 20 s ready wait; `USER user` and `WORKDIR /home/user` close
 * the steps unless the file set them. Multi-stage files are refused, as by the
 * SDK; EXPOSE and VOLUME are ignored, other instructions too (the SDK warns).
 *
 * @module
 */
import { DockerfileParser, type Instruction } from "dockerfile-ast";
import type { TemplateStepInput } from "./template.args";
import { dockerfileProblem } from "./template.dockerfile-check";

/** The build a Dockerfile makes. */
export interface DockerfileBuild {
  /** The FROM image. */
  fromImage: string;
  /** The steps, in the SDK's order. */
  steps: TemplateStepInput[];
  startCmd?: string;
  readyCmd?: string;
  /** Instructions the SDK warns about and ignores (LABEL, HEALTHCHECK, …). */
  ignored: string[];
}

/** The SDK's `waitForTimeout(20_000)`: the ready command of a Dockerfile's CMD. */
const DOCKERFILE_READY_CMD = "sleep 20";

const values = (instruction: Instruction): string[] =>
  (instruction.getArguments() ?? []).map((a) => a.getValue());

/** The variables of an ENV or ARG instruction, as the SDK's `handleEnvInstruction` reads them. */
function envVars(keyword: string, args: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  const assign = (text: string, argWithoutValue: boolean) => {
    const eq = text.indexOf("=");
    if (eq > 0) vars[text.substring(0, eq)] = text.substring(eq + 1);
    else if (argWithoutValue && keyword === "ARG") vars[text] = "";
  };
  if (args.length === 2) {
    const [first, second] = args as [string, string];
    if (first.includes("=") && second.includes("=")) args.forEach((a) => assign(a, false));
    else vars[first] = second;
  } else if (args.length === 1) {
    const only = args[0];
    if (only.indexOf("=") > 0) assign(only, false);
    else if (keyword === "ARG" && only.trim()) vars[only.trim()] = "";
  } else {
    args.forEach((a) => assign(a, true));
  }
  return vars;
}

/** The start command of CMD/ENTRYPOINT: a JSON array's words joined by spaces, else the text. */
function startCommand(args: string[]): string {
  const text = args.join(" ");
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed.join(" ");
  } catch {
    // Shell form: the text as written.
  }
  return text;
}

/**
 * The build of Dockerfile `content`. Call {@link dockerfileProblem} first (the
 * Template's check does): a file it refuses throws here.
 */
export function parseDockerfile(content: string): DockerfileBuild {
  const problem = dockerfileProblem(content);
  if (problem) throw new Error(`the Dockerfile ${problem}`);
  const instructions = DockerfileParser.parse(content).getInstructions();
  const from = instructions.find((i) => i.getKeyword() === "FROM")!;
  const build: DockerfileBuild = {
    fromImage: values(from)[0] ?? "e2bdev/base",
    steps: [{ user: "root" }, { workdir: "/" }],
    ignored: [],
  };
  let userChanged = false;
  let workdirChanged = false;
  for (const instruction of instructions) {
    const keyword = instruction.getKeyword();
    const args = values(instruction);
    switch (keyword) {
      case "FROM":
      case "EXPOSE":
      case "VOLUME":
        break;
      case "RUN":
        if (args.length > 0) build.steps.push({ run: args.join(" ") });
        break;
      case "COPY":
      case "ADD": {
        if (args.length < 2) break;
        const dest = args[args.length - 1];
        // `--chown=u:g` is the COPY's user, as with the SDK (a ModifiableInstruction has flags).
        const flags = (
          instruction as unknown as {
            getFlags(): Array<{ getName(): string; getValue(): string | null }>;
          }
        ).getFlags();
        const user = flags.find((f) => f.getName() === "chown")?.getValue() ?? undefined;
        for (const src of args.slice(0, -1))
          build.steps.push({ copy: { src, dest, ...(user ? { user } : {}) } });
        break;
      }
      case "WORKDIR":
        if (args.length > 0) build.steps.push({ workdir: args[0] });
        workdirChanged = true;
        break;
      case "USER":
        if (args.length > 0) build.steps.push({ user: args[0] });
        userChanged = true;
        break;
      case "ENV":
      case "ARG": {
        const vars = envVars(keyword, args);
        if (Object.keys(vars).length > 0) build.steps.push({ env: vars });
        break;
      }
      case "CMD":
      case "ENTRYPOINT":
        if (args.length > 0) {
          build.startCmd = startCommand(args);
          build.readyCmd = DOCKERFILE_READY_CMD;
        }
        break;
      default:
        build.ignored.push(keyword);
    }
  }
  if (!userChanged) build.steps.push({ user: "user" });
  if (!workdirChanged) build.steps.push({ workdir: "/home/user" });
  return build;
}
