/**
 * The COPY sources of a Template built in a CDK app, packaged so that the
 * steps keep the paths the user wrote. Each source packaged as its own asset
 * would be named by its asset path (`assets/copy-1/<hash>`) in the build's
 * COPY step, its log lines and its files hash; instead every source of the
 * build is staged in one directory at the path the same COPY names in HCL,
 * and that directory, packaged as one asset, becomes the build's `context`.
 * The stage holds copies, not symbolic links: an asset copy keeps a link as
 * a link, and the provider would archive the link instead of the files.
 *
 * @module
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Construct } from "constructs";
import { appDirectory } from "./local-paths";
import type { CdkRuntime } from "./runtime";

/** One COPY source to stage: where the user wrote it, for messages, and its path. */
export interface CopySourceRef {
  /** The attribute path in the construct's naming, e.g. `buildAttribute.steps[1].copy.src`. */
  where: string;
  /** The path as the user wrote it. */
  src: string;
}

/** The staged context, or the problems that kept it from being made. */
export type StagedContext =
  | { ok: true; context: string; paths: ReadonlyMap<string, string> }
  | { ok: false; problems: string[] };

/** The stage directories this process made. */
const stages = new Set<string>();

/**
 * The path a COPY of `absolute` names below `base`, as the provider names it
 * when reading from the module directory: the relative path inside `base`,
 * else the base name (a source outside is archived from its own parent).
 */
function stagedPath(base: string, absolute: string): string {
  const relative = path.relative(base, absolute);
  if (relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative))
    return relative.split(path.sep).join("/");
  return path.basename(absolute);
}

/**
 * Stages `sources` (relative to the app directory, or absolute) in one
 * directory under the temporary directory, with the app directory's
 * `.dockerignore`, and packages it as asset `context` under `scope`. Returns
 * the asset's stack-relative path and the path each source has in it.
 */
export function stageCopyContext(
  scope: Construct,
  sources: readonly CopySourceRef[],
  runtime: CdkRuntime,
): StagedContext {
  const base = appDirectory(scope);
  const problems: string[] = [];
  const placed = new Map<string, string>(); // staged path -> absolute source
  const paths = new Map<string, string>(); // src as written -> staged path
  for (const { where, src } of sources) {
    const absolute = path.resolve(base, src);
    if (!fs.existsSync(absolute)) {
      problems.push(
        `${where} "${src}" does not exist (looked for ${absolute}); relative paths are read from ${base} (the directory of cdktf.json, else the working directory)`,
      );
      continue;
    }
    const staged = stagedPath(base, absolute);
    const other = placed.get(staged);
    if (other !== undefined && other !== absolute) {
      problems.push(
        `${where} "${src}" would be copied as ${staged}, as ${other} is: give one of them another name, or set buildAttribute.context`,
      );
      continue;
    }
    placed.set(staged, absolute);
    paths.set(src, staged);
  }
  // A second put* of the build replaces the earlier asset.
  scope.node.tryRemoveChild("context");
  if (problems.length > 0) return { ok: false, problems };
  const key = createHash("sha256").update(`${base}\0${scope.node.path}`).digest("hex").slice(0, 16);
  // One stage per process: two synths of the same app may run at once. The
  // asset copies it at synth, later; it goes when the process ends.
  const stage = path.join(os.tmpdir(), "sandbox-iac-cdk-copy", `${key}-${process.pid}`);
  if (!stages.has(stage)) {
    stages.add(stage);
    if (stages.size === 1)
      process.once("exit", () => {
        for (const dir of stages) fs.rmSync(dir, { recursive: true, force: true });
      });
  }
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  const ignore = path.join(base, ".dockerignore");
  if (fs.existsSync(ignore)) fs.copyFileSync(ignore, path.join(stage, ".dockerignore"));
  for (const [staged, absolute] of placed) {
    const to = path.join(stage, staged);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.cpSync(absolute, to, { recursive: true, verbatimSymlinks: true });
  }
  const asset = new runtime.TerraformAsset(scope, "context", { path: stage });
  return { ok: true, context: asset.path, paths };
}
