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
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Construct } from "constructs";
import { COPY_CONTEXT_MARKER, resolveCopySource } from "../resources/template/template.files";
import type { CdkRuntime } from "./runtime";

/**
 * The directory relative local paths are read from: the directory of the
 * app's `cdktf.json` (the CDK convention, as for `TerraformAsset`), else the
 * working directory.
 */
function appDirectory(scope: Construct): string {
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
  const found = locate(scope, id, localPath, runtime);
  if (!found.ok || found.absolute === undefined) return found;
  return { ok: true, path: new runtime.TerraformAsset(scope, id, { path: found.absolute }).path };
}

/** Where `localPath` is, or why it cannot be packaged (a token is returned as it is). */
function locate(
  scope: Construct,
  id: string,
  localPath: string,
  runtime: CdkRuntime,
): PackagedPath & { absolute?: string; base?: string } {
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
  return { ok: true, path: localPath, absolute, base };
}

/**
 * Packages a Template COPY `src` as asset `id` under `scope`, so that the
 * step keeps the user's path: the asset is a staged directory holding
 * {@link COPY_CONTEXT_MARKER} and the source at the path a Terraform user's
 * COPY of it would name (`files/app`, relative to the app directory), and the
 * returned path is `<asset>/files/app`. The provider archives from the marked
 * directory, so logs, the build's COPY step and its files hash name
 * `files/app`, as for the same source in HCL. The stage holds a symbolic link
 * to the source (the asset copy follows it), under the temporary directory.
 */
export function packageCopySource(
  scope: Construct,
  id: string,
  localPath: string,
  runtime: CdkRuntime,
): PackagedPath {
  const found = locate(scope, id, localPath, runtime);
  if (!found.ok || found.absolute === undefined || found.base === undefined) return found;
  const { src } = resolveCopySource(localPath, found.base);
  const key = createHash("sha256").update(`${found.absolute}\0${src}`).digest("hex").slice(0, 16);
  const stage = path.join(os.tmpdir(), "sandbox-iac-cdk-copy", key);
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(path.join(stage, src)), { recursive: true });
  fs.writeFileSync(
    path.join(stage, COPY_CONTEXT_MARKER),
    "sandbox-iac: the COPY source below is named by the path after this directory\n",
  );
  fs.symlinkSync(found.absolute, path.join(stage, src));
  const asset = new runtime.TerraformAsset(scope, id, { path: stage });
  return { ok: true, path: path.posix.join(asset.path, src) };
}
