#!/usr/bin/env node
/**
 * The provider process Terraform starts (through the launcher that
 * `sandbox-iac terraform install` writes). It runs program.ts from its
 * bundle (scripts/bundle-provider.js) with V8's code cache: compiling the
 * bundle was the largest part of the provider's start left once everything
 * else was loaded lazily, and Terraform starts the provider 3 to 4 times per
 * plan or apply (issue 19).
 *
 * The cache lies beside the bundle, so only who can change the bundle can
 * change it. V8 refuses a cache made from other source or by another V8
 * version or flags; the provider then compiles as usual and, once its
 * handshake is out, writes a new cache if the folder is writable.
 *
 * @module
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import * as vm from "node:vm";

/** The bundle of program.ts. */
const BUNDLE = path.join(__dirname, "provider.js");
/** Its V8 code cache. */
const CODE_CACHE = `${BUNDLE}.cache`;

type Program = typeof import("./program");

function readIfPresent(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Writes the script's code cache, leaving the old one when the folder is read-only. */
function writeCodeCache(script: vm.Script): void {
  const tmp = `${CODE_CACHE}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, script.createCachedData());
    fs.renameSync(tmp, CODE_CACHE);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

function start(): void {
  const source = readIfPresent(BUNDLE);
  if (!source) {
    // The compiled sources without the build's bundling step.
    void import("./program").then((program) => program.runProvider());
    return;
  }
  const cachedData = readIfPresent(CODE_CACHE);
  // The CommonJS wrapper node itself puts around a module.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${source.toString("utf8")}\n})`,
    { filename: BUNDLE, ...(cachedData ? { cachedData } : {}) },
  );
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
  ) => void;
  const bundle = { exports: {} };
  wrapper(bundle.exports, createRequire(BUNDLE), bundle, BUNDLE, __dirname);
  const fresh = !cachedData || script.cachedDataRejected === true;
  (bundle.exports as Program).runProvider(() => {
    // After the handshake, so the cache holds what the start compiled.
    if (fresh) setImmediate(() => writeCodeCache(script));
  });
}

start();
