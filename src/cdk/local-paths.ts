/**
 * Local files named in a stack (a Provisioner's `files[].source`, a Template
 * COPY `src`) are packaged as `TerraformAsset`s at synth time: the file or
 * directory is copied into `cdktf.out/stacks/<stack>/assets/…` and the
 * attribute gets that path, relative to the stack directory. `terraform apply`
 * run from the stack directory (on this machine or on another pipeline runner)
 * therefore finds the files, and the provider hashes exactly what is applied.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Construct } from "constructs";
import type { CdkRuntime } from "./runtime";

/**
 * The directory relative local paths are read from: the directory of the
 * app's `cdktf.json` (the CDK convention, as for `TerraformAsset`), else the
 * working directory.
 */
export function appDirectory(scope: Construct): string {
  const fromContext: unknown = scope.node.tryGetContext("cdktfJsonPath");
  if (typeof fromContext === "string") return path.dirname(path.resolve(fromContext));
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "cdktf.json"))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

/** A local path to package, or why it cannot be. */
export type PackagedPath =
  { ok: true; path: string } | { ok: false; problem: string; path: string };

/**
 * Copies the file or directory `localPath` into the stack as asset `id` under
 * `scope` and returns the asset's stack-relative path. A late-bound value
 * (a token) is returned unchanged; a path that does not exist is reported,
 * not thrown, so that synth validation lists it with every other problem.
 */
export function packageLocalPath(
  scope: Construct,
  id: string,
  localPath: string,
  runtime: CdkRuntime,
): PackagedPath {
  if (runtime.Token.isUnresolved(localPath)) return { ok: true, path: localPath };
  const base = appDirectory(scope);
  const absolute = path.resolve(base, localPath);
  // A second put* of the same attribute replaces the earlier asset.
  scope.node.tryRemoveChild(id);
  if (!fs.existsSync(absolute)) {
    return {
      ok: false,
      path: localPath,
      problem: `"${localPath}" does not exist (looked for ${absolute}); relative paths are read from ${base} (the directory of cdktf.json, else the working directory)`,
    };
  }
  return { ok: true, path: new runtime.TerraformAsset(scope, id, { path: absolute }).path };
}
